// Package fault classifies errors by what the user must do about them, so the
// CLI can map every failure to one exit code and one sentence with its fix.
package fault

import (
	"context"
	"errors"
	"fmt"
)

// Exit codes promised by the CLI contract (docs/design.md).
const (
	ExitOK          = 0
	ExitRuntime     = 1
	ExitInput       = 2
	ExitThreshold   = 3
	ExitInterrupted = 130
)

// InputError is bad input or a missing prerequisite: the user can fix it
// before anything runs. Msg names the problem, Fix says what to do.
type InputError struct {
	Msg string
	Fix string
}

func (e *InputError) Error() string {
	if e.Fix == "" {
		return e.Msg
	}
	return e.Msg + "; " + e.Fix
}

// Input returns an InputError. The message names the problem; fix names the cure.
func Input(fix, format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...), Fix: fix}
}

// ErrInterrupted marks a run stopped by SIGINT or SIGTERM.
var ErrInterrupted = errors.New("interrupted")

// ThresholdError reports declared thresholds that failed.
type ThresholdError struct{ Failed []string }

func (e *ThresholdError) Error() string {
	return fmt.Sprintf("%d threshold(s) failed", len(e.Failed))
}

// RegressionError reports a run that regressed against its baseline of
// stored runs (--baseline): exit 3, as a failed threshold.
type RegressionError struct{ Reason string }

func (e *RegressionError) Error() string {
	return "the run regressed against its baseline: " + e.Reason
}

// Code maps an error to the exit code of the CLI contract.
func Code(err error) int {
	var in *InputError
	var th *ThresholdError
	var rg *RegressionError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &in):
		return ExitInput
	case errors.Is(err, ErrInterrupted), errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.As(err, &th), errors.As(err, &rg):
		return ExitThreshold
	default:
		return ExitRuntime
	}
}
