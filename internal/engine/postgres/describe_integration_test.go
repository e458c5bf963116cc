//go:build integration

package postgres

import "testing"

// Settings are recorded as SHOW prints them: shared_buffers in its own
// unit, not its count of 8 kB pages with "kB" glued on.
func TestSettingsAreRecordedInTheirRealUnit(t *testing.T) {
	t.Parallel()
	target, _ := startManaged(t)
	got := target.Info.Settings["shared_buffers"]
	if got != target.Managed.Settings()["shared_buffers"] {
		t.Fatalf("shared_buffers recorded as %q, started with %q", got, target.Managed.Settings()["shared_buffers"])
	}
}
