package graph

import "sync"

// Scope releases, when it is closed, every value computed inside it but
// those it is told to keep: TensorFlow's tf.tidy as an explicit value, for
// Go has no goroutine-local state to hold an implicit one.
//
// Membership follows the data. A value joins a scope when it is computed
// by an operation of this package from an operand that belongs to the
// scope (when operands belong to several, it joins the first no-grad one,
// else the first); Use puts a value in explicitly (a batch, a constant).
// Parameters therefore never join: nothing that belongs to a scope
// computes them. Keep takes a value out, so that Close leaves it alone and
// values computed from it later join no scope; values computed after Close
// join nothing. A scope thus never frees another goroutine's values
// unless that goroutine computed them from this scope's own members.
//
// Operations on parameters alone (a positional table scaled by a weight)
// have no operand in the scope, so their results are outside it: release
// them by hand, or Use them.
//
// A scope made with the NoGrad option also turns recording off for its
// members: an operation with any operand in a no-grad scope records
// nothing, even when another operand is a parameter that requires a
// gradient, as under torch.no_grad — but only for the computation that
// flows from the scope's members, so another goroutine training the same
// parameters at the same time records as usual.
//
// A scope's methods may be called from several goroutines; Close must be
// called once every goroutine is done with its members.
type Scope struct {
	noGrad   bool
	autocast bool // see Autocast

	mu      sync.Mutex
	vals    []*Value
	closed  bool
	pruneAt int
	// casts caches an autocast scope's float16 copies of parameters, so
	// that a weight used several times is cast once (see Autocast).
	casts map[castKey]*Value
}

// ScopeOption configures a Scope.
type ScopeOption uint8

// NoGrad makes a scope's computations record nothing: its members need no
// gradient and keep no saved tensors, as under torch.no_grad. Use it for
// evaluation and inference:
//
//	s := graph.NewScope(graph.NoGrad)
//	defer s.Close()
//	logits := model.Forward(s.Use(graph.Constant(batch)))
const NoGrad ScopeOption = 1

// NewScope returns an open scope.
func NewScope(opts ...ScopeOption) *Scope {
	s := &Scope{}
	for _, o := range opts {
		if o&NoGrad != 0 {
			s.noGrad = true
		}
		if o&Autocast != 0 {
			s.autocast = true
		}
	}
	return s
}

// Tidy runs f in a new scope and closes it, keeping f's result: every other
// value computed in f from the scope's members (f Uses its inputs) is
// released, even when f panics. Keep more results with s.Keep inside f.
func Tidy(f func(s *Scope) *Value, opts ...ScopeOption) (result *Value) {
	s := NewScope(opts...)
	defer s.Close()
	result = f(s)
	s.Keep(result)
	return result
}

// IsNoGrad reports whether s was made with the NoGrad option.
func (s *Scope) IsNoGrad() bool { return s.noGrad }

// Use puts x in s (taking it out of any scope it was in) and returns it:
// values computed from x join s, and Close releases x. On a closed scope
// it panics.
func (s *Scope) Use(x *Value) *Value {
	x.checkLive("Scope.Use")
	if !s.add(x) {
		misuse("Scope.Use", "the scope is closed")
	}
	return x
}

// Keep takes each value out of s, so that Close leaves it alone; values
// computed from it later join no scope (and, from a no-grad scope, are
// recorded again when they meet a parameter). Nil values and values that
// are not members are ignored.
func (s *Scope) Keep(xs ...*Value) {
	for _, x := range xs {
		if x != nil {
			x.scope.CompareAndSwap(s, nil)
		}
	}
}

// Close releases every member of s but those kept; members computed from
// them afterwards join nothing. Close is idempotent.
func (s *Scope) Close() {
	s.mu.Lock()
	vals := s.vals
	s.vals, s.closed, s.casts = nil, true, nil
	s.mu.Unlock()
	for _, x := range vals {
		// A member that moved to another scope or was kept is not ours.
		if x.scope.CompareAndSwap(s, nil) {
			x.Release()
		}
	}
}

// releaseExcept closes s keeping keep: the backward engine's arena.
func (s *Scope) releaseExcept(keep []*Value) {
	s.Keep(keep...)
	s.Close()
}

// add makes x a member; false when s is closed.
func (s *Scope) add(x *Value) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	x.scope.Store(s)
	s.vals = append(s.vals, x)
	if len(s.vals) >= s.pruneAt {
		s.prune()
	}
	return true
}

// prune forgets released members and those that left, so that a
// long-lived scope holds only its live members: intermediates released
// early by hand would otherwise pile up until Close.
func (s *Scope) prune() {
	live := s.vals[:0]
	for _, x := range s.vals {
		if !x.released.Load() && x.scope.Load() == s {
			live = append(live, x)
		}
	}
	clear(s.vals[len(live):])
	s.vals = live
	s.pruneAt = max(256, 2*len(live))
}

// join makes result a member of the scope its operands give it (see
// Scope) and reports whether that scope turns recording off.
func join(result *Value, inputs ...*Value) (noGrad bool) {
	var to *Scope
	for _, in := range inputs {
		if in == nil {
			continue
		}
		s := in.scope.Load()
		switch {
		case s == nil:
		case s.noGrad:
			if !noGrad {
				to, noGrad = s, true
			}
		case to == nil:
			to = s
		}
	}
	if to != nil {
		to.add(result)
	}
	return noGrad
}

// inNoGrad reports whether any of xs belongs to a no-grad scope.
func inNoGrad(xs ...*Value) bool {
	for _, x := range xs {
		if x != nil {
			if s := x.scope.Load(); s != nil && s.noGrad {
				return true
			}
		}
	}
	return false
}

// Scope returns the scope x belongs to, or nil.
func (x *Value) Scope() *Scope { x.checkLive("Scope"); return x.scope.Load() }
