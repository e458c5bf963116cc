//go:build integration

package oltppg

import (
	"context"
	"slices"
	"testing"

	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// Every page of a loaded table holds rows, on the newest PostgreSQL
// installed here: from 16 on, a COPY extends a table many pages at a
// time and leaves what it did not fill empty, so a COPY a batch made the
// database bigger than its rows (a third of history's and orders' pages
// on 18) and its MB/s better than the load.
func TestLoadLeavesNoEmptyPages(t *testing.T) {
	t.Parallel() // an instance of its own, beside the shared one's tests
	if testing.Short() {
		t.Skip("builds on a real PostgreSQL; run without -short")
	}
	_, missing := postgres.FindBinaries("")
	testenv.Need(t, "postgresql", missing, "apt-get install postgresql")
	installed := postgres.Installed()
	newest := installed[0]
	for _, b := range installed[1:] {
		if b.Major > newest.Major {
			newest = b
		}
	}
	if newest.Major < 16 && testenv.Required("postgresql18") {
		t.Fatal("PostgreSQL 18 is required here: .ci/setup installs it under /opt/calibra")
	}
	ctx := context.Background()
	target, conn := builtTargetOn(t, newest.Dir)
	// A build told to keep no template (the durability audit's) keeps none.
	if _, exists, err := target.TemplateNote(ctx); err != nil || exists {
		t.Errorf("a build with NoTemplate left a template (%v)", err)
	}
	for _, tb := range tpcc.Tables() {
		var pages, used int64
		if err := conn.QueryRow(ctx, `SELECT pg_relation_size($1::regclass) / current_setting('block_size')::int,
			(SELECT count(DISTINCT (ctid::text::point)[0]) FROM `+tb.String()+`)`, tb.String()).Scan(&pages, &used); err != nil {
			t.Fatal(err)
		}
		if pages != used {
			t.Errorf("PostgreSQL %d: %s has %d pages, %d of them with rows", newest.Major, tb, pages, used)
		}
	}
	// The build's ANALYZE left statistics on the columns plans read, and
	// only on those.
	for _, tb := range tpcc.Tables() {
		var got []string
		if err := conn.QueryRow(ctx, `SELECT coalesce(array_agg(attname::text ORDER BY attname), '{}') FROM pg_stats
			WHERE schemaname = current_schema() AND tablename = $1`, tb.String()).Scan(&got); err != nil {
			t.Fatal(err)
		}
		want := slices.Sorted(slices.Values(planned[tb]))
		if !slices.Equal(got, want) {
			t.Errorf("PostgreSQL %d: %s has statistics on %v, want %v", newest.Major, tb, got, want)
		}
	}
}
