package safefs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/calibra-bench/calibra/internal/fault"
)

// The rule for what calibra runs and obeys (docs/security.md, "What
// calibra runs"): a program it starts, a study file it follows, and every
// directory above each, and every link on the way, belong to root or
// calibra's account and are writable by no other account, as OpenSSH's
// StrictModes asks of authorized_keys. Otherwise another account could
// change what root runs, or what a study tells root to run, between the
// check and the use.

// maxHops bounds the links followed to a trusted file, as the kernel's
// own limit does (ELOOP).
const maxHops = 40

// CheckTrusted checks that the file at path (what names it in the error:
// "--fio /home/eve/fio", "the study file s.yaml") may be trusted: every
// link from path to the file, the file itself and every directory above
// them belong to root or calibra's account, and none is writable by
// another account (a sticky directory such as /tmp may hold them). It
// returns the file's real path, which stays the same file for as long as
// calibra runs. A refusal is one sentence with its fix.
func CheckTrusted(path, what string) (string, error) {
	p, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	for hop := 0; ; hop++ {
		if hop == maxHops {
			return "", fault.Input("give the file itself", "%s: too many symbolic links on the way to the file", what)
		}
		if err := trustedDir(filepath.Dir(p), what, true); err != nil {
			return "", err
		}
		st, err := lstat(p)
		if err != nil {
			return "", fault.Input("check the path", "%s cannot be read: %v", what, unwrap(err))
		}
		if !ours(st.uid) {
			return "", untrusted(what, p, fmt.Sprintf("belongs to %s", Owner(st.uid)))
		}
		if !st.link {
			switch {
			case st.dir:
				return "", fault.Input("give a file", "%s is a directory", what)
			case st.othersWrite():
				return "", untrusted(what, p, "is writable by other accounts")
			}
			return p, nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = filepath.Clean(target)
	}
}

// CheckTrustedDir is CheckTrusted for a directory of programs (--pg-bin,
// a study's target.pg_bin): it and every directory above it belong to root
// or calibra's account and are writable by no other account. The directory
// itself may not be sticky and open to all (as /tmp is): another account
// could add a program calibra, or a program it runs, looks for there.
func CheckTrustedDir(path, what string) error {
	return trustedDir(path, what, false)
}

// runHarm is what another account could do through a program or study
// file, or a directory above one, that fails the rule.
const runHarm = "change what calibra runs or reads from it"

// trustFix is the cure for an untrusted program or file: own a copy.
const trustFix = "copy it to a directory only root (or calibra's account) can write and give that copy, or run calibra as the account that owns it (docs/security.md, \"What calibra runs\")"

// trustedDir checks a directory holding something calibra runs or obeys:
// CheckParent's rule (links on the way checked; dir itself sticky only
// when stickyOK), its refusal naming what.
func trustedDir(dir, what string, stickyOK bool) error {
	err := check(dir, trustFix, stickyOK, runHarm)
	var in *fault.InputError
	if errors.As(err, &in) {
		return fault.Input(in.Fix, "%s: %s", what, in.Msg)
	}
	return err
}

func untrusted(what, path, why string) error {
	return fault.Input(trustFix, "%s: %s %s, who could %s", what, path, why, runHarm)
}
