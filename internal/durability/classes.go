package durability

import (
	"errors"
	"regexp"
	"strings"

	"github.com/calibra-bench/calibra/internal/results"
)

// Class is what a power cut did to a cycle, in the terms of the
// power-fault literature (Zheng et al., "Torturing Databases for Fun and
// Profit", OSDI 2014; "Understanding the Robustness of SSDs under Power
// Fault", FAST 2013). docs/lab.md defines each.
type Class string

// The classes, from the harmless to the worst; a cycle's outcome is the
// worst it found.
const (
	// Durable: every acknowledged commit survived, the consistency
	// conditions hold, and no commit in flight at the cut survived.
	Durable Class = "durable"
	// InFlight: as Durable, and commits in flight at the cut (never
	// acknowledged) survived too: allowed.
	InFlight Class = "in-flight"
	// LostAcknowledged: the server recovered, but commits it had
	// acknowledged are gone: the durability violation.
	LostAcknowledged Class = "lost-acknowledged"
	// TornPage: the server recovered and said so, but the page check
	// found a damaged page (a write torn at the cut, not repaired by the
	// recovery). Never durable.
	TornPage Class = "torn-page"
	// Corrupt: torn or corrupt pages: the server recovered but its data
	// break the consistency conditions or cannot be read, or it refused
	// to start naming a corrupt or torn page, log record or control file.
	Corrupt Class = "corrupt"
	// FilesGone: the data directory, or files the server needs in it,
	// are gone after the cut.
	FilesGone Class = "files-gone"
	// NoRestart: the server (or the storage under it) would not come
	// back, for a reason that names neither corruption nor missing files.
	NoRestart Class = "no-restart"
)

// Classes lists the classes in order of severity.
var Classes = []Class{Durable, InFlight, LostAcknowledged, TornPage, Corrupt, FilesGone, NoRestart}

// RecoveryError is a recovery that failed for a known class of reason
// (the host found the data directory gone, say).
type RecoveryError struct {
	Class Class
	Err   error
}

func (e *RecoveryError) Error() string { return e.Err.Error() }
func (e *RecoveryError) Unwrap() error { return e.Err }

// missingSigns and corruptSigns are what PostgreSQL and InnoDB say when
// a file they need is gone, or a page, record or control file is torn or
// corrupt, lower-cased.
var (
	missingSigns = []string{"no such file or directory", "was not found", "cannot open datafile", "tablespace is missing",
		"doesn't exist in engine", "could not open file", "does not exist"}
	corruptSigns = []string{"corrupt", "checksum", "invalid page", "invalid magic number", "invalid checkpoint record",
		"could not locate a valid checkpoint", "torn", "could not read block",
		"unexpected pageaddr", "is marked as crashed", "missing file_checkpoint"}
)

// classify names the class of a failed recovery: the host's own when it
// gave one, else what the error says (without places, the audit's
// directories, and the other names it quotes), else fallback (NoRestart
// for a server that would not start, Corrupt for one whose data could not
// be read).
func classify(err error, fallback Class, places ...string) Class {
	var re *RecoveryError
	if errors.As(err, &re) {
		return re.Class
	}
	msg := strings.ToLower(messageWords(err.Error(), places))
	for _, s := range corruptSigns {
		if strings.Contains(msg, s) {
			return Corrupt
		}
	}
	for _, s := range missingSigns {
		if strings.Contains(msg, s) {
			return FilesGone
		}
	}
	return fallback
}

// named matches what a message names rather than says: a quoted name
// ("..." as PostgreSQL quotes, '...' as MariaDB does, not the apostrophe
// inside a word) and an unquoted path (/..., ./...).
var named = regexp.MustCompile(`"[^"]*"|(^|[^\pL\pN])'[^']*'|(^|\s)\.{0,2}/\S*`)

// messageWords is what a message says without places (removed first, as
// they may hold spaces) and the other names and paths it quotes: a --path
// with "torn" or "corrupt" in it says nothing of the data.
func messageWords(msg string, places []string) string {
	for _, p := range places {
		if p != "" {
			msg = strings.ReplaceAll(msg, p, "/")
		}
	}
	return named.ReplaceAllString(msg, "$1$2")
}

// outcome is the worst class a cycle found: failed when its recovery
// failed, else from what verification counted. A cut that tore writes
// and left a page the server or the page check names damaged is TornPage,
// whatever else the damage broke.
func outcome(c *results.DurabilityCycle, failed Class) Class {
	tornDamage := c.Torn != nil && c.Torn.Torn > 0 && c.PagesDamaged > 0
	switch {
	case tornDamage && (failed == "" || failed == Corrupt):
		return TornPage
	case failed != "":
		return failed
	case c.Consistency != nil && !c.Consistency.OK:
		return Corrupt
	case c.PagesDamaged > 0:
		return TornPage
	case c.LostAcknowledged > 0:
		return LostAcknowledged
	case c.CommittedUnacknowledged > 0:
		return InFlight
	}
	return Durable
}
