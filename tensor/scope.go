package tensor

import "sync"

// Scope releases, when it is closed, every tensor computed inside it but
// those it is told to keep: TensorFlow's tf.tidy as an explicit value, for
// Go has no goroutine-local state to hold an implicit one.
//
// Membership follows the data. A tensor joins a scope when an operation
// computes it from an operand that belongs to the scope (views included:
// a Reshape or Slice of a member is a member); Use puts a tensor in
// explicitly — what creation functions (FromFloat32, Zeros, a Generator's
// draws) return belongs to no scope, since they have no operand. Keep
// takes a tensor out, so that Close leaves it alone and tensors computed
// from it later join no scope; tensors computed after Close join nothing.
// When operands belong to several scopes, the result joins the first
// operand's.
//
// Because membership follows data and not goroutines, a scope never frees
// another goroutine's tensors unless that goroutine computed them from
// the scope's own members; conversely a goroutine that shares a member
// with others must Keep what they still use before Close. A long-lived
// scope forgets members released by hand, so it holds only live ones.
//
// A scope's methods may be called from several goroutines; Close must be
// called once every goroutine is done with its members.
type Scope struct {
	mu      sync.Mutex
	members []*Tensor
	closed  bool
	pruneAt int
}

// NewScope returns an open scope.
func NewScope() *Scope { return &Scope{} }

// Tidy runs f in a new scope and closes it, keeping f's result: every other
// tensor computed in f from the scope's members (f Uses its inputs) is
// released, even when f panics. Keep more results with s.Keep inside f.
func Tidy(f func(s *Scope) *Tensor) (result *Tensor) {
	s := NewScope()
	defer s.Close()
	result = f(s)
	s.Keep(result)
	return result
}

// Use puts t in s (taking it out of any scope it was in) and returns it:
// tensors computed from t join s, and Close releases t. On a closed scope
// it panics.
func (s *Scope) Use(t *Tensor) *Tensor {
	t.checkLive("Scope.Use")
	if !s.add(t) {
		misuse("Scope.Use", "the scope is closed")
	}
	return t
}

// Keep takes each tensor out of s, so that Close leaves it alone and
// tensors computed from it later join no scope. Nil tensors and tensors
// that are not members are ignored.
func (s *Scope) Keep(ts ...*Tensor) {
	for _, t := range ts {
		if t != nil {
			t.scope.CompareAndSwap(s, nil)
		}
	}
}

// Close releases every member of s but those kept. Close is idempotent.
func (s *Scope) Close() {
	s.mu.Lock()
	members := s.members
	s.members, s.closed = nil, true
	s.mu.Unlock()
	for _, t := range members {
		// A member that moved to another scope or was kept is not ours.
		if t.scope.CompareAndSwap(s, nil) {
			t.Release()
		}
	}
}

// Scope returns the scope t belongs to, or nil.
func (t *Tensor) Scope() *Scope { return t.scope.Load() }

// add makes t a member; false when s is closed.
func (s *Scope) add(t *Tensor) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	t.scope.Store(s)
	s.members = append(s.members, t)
	if len(s.members) >= s.pruneAt {
		s.prune()
	}
	return true
}

// prune forgets released members and those that left: composite ops
// release their intermediates themselves, and these would otherwise pile
// up until Close.
func (s *Scope) prune() {
	live := s.members[:0]
	for _, t := range s.members {
		if !t.released.Load() && t.scope.Load() == s {
			live = append(live, t)
		}
	}
	clear(s.members[len(live):])
	s.members = live
	s.pruneAt = max(256, 2*len(live))
}

// adopt makes out, a result under construction, a member of the scope of
// its first operand that has one. It is the one place results join
// scopes: compute, exec, views and copies call it.
func adopt(out *Tensor, inputs ...*Tensor) {
	if out == nil || out.scope.Load() != nil {
		return
	}
	for _, in := range inputs {
		if in == nil {
			continue
		}
		if s := in.scope.Load(); s != nil {
			s.add(out)
			return
		}
	}
}
