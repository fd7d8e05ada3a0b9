package optim

import "math"

// Schedule gives the learning rate for each step, counted from 0 as
// PyTorch's schedulers count last_epoch: call opt.SetLR(s.LR(step))
// before the step'th Step. Schedules are pure functions of the step, so
// resuming from a checkpoint needs only the step number.
type Schedule interface {
	LR(step int) float64
}

// StepLR multiplies the rate by Gamma every StepSize steps:
// Base·Gamma^⌊step/StepSize⌋, as torch.optim.lr_scheduler.StepLR. A nil
// Gamma means PyTorch's default 0.1; set it with new: Gamma: new(0.5).
// StepSize must be positive.
type StepLR struct {
	Base     float64
	StepSize int
	Gamma    *float64
}

// LR returns the rate at step (negative steps are step 0).
func (s StepLR) LR(step int) float64 {
	if s.StepSize <= 0 {
		misuse("StepLR.LR", "StepSize %d is not positive", s.StepSize)
	}
	step = max(step, 0)
	return s.Base * math.Pow(*orDefault(s.Gamma, 0.1), float64(step/s.StepSize))
}

// CosineWarmup warms the rate up linearly from 0 to Base over Warmup
// steps, then anneals it along a half cosine to Min at step Total, and
// holds Min after that:
//
//	step < Warmup:          Base·step/Warmup
//	Warmup ≤ step ≤ Total:  Min + (Base − Min)·(1 + cos(π·(step − Warmup)/(Total − Warmup)))/2
//	step > Total:           Min
//
// After the warm-up this is torch.optim.lr_scheduler.CosineAnnealingLR
// with T_max = Total − Warmup and eta_min = Min, started at step Warmup
// (which, unlike this schedule, would rise again after T_max). Warmup 0
// skips the warm-up. Total must exceed Warmup.
type CosineWarmup struct {
	Base, Min     float64
	Warmup, Total int
}

// LR returns the rate at step (negative steps are step 0).
func (s CosineWarmup) LR(step int) float64 {
	if s.Warmup < 0 || s.Total <= s.Warmup {
		misuse("CosineWarmup.LR", "needs Total > Warmup ≥ 0, have Warmup %d, Total %d", s.Warmup, s.Total)
	}
	step = max(step, 0)
	switch {
	case step < s.Warmup:
		return s.Base * float64(step) / float64(s.Warmup)
	case step >= s.Total:
		return s.Min
	}
	t := float64(step-s.Warmup) / float64(s.Total-s.Warmup)
	return s.Min + (s.Base-s.Min)*(1+math.Cos(math.Pi*t))/2
}
