//go:build integration

// Package live watches a real run on calibra serve's live page.
package live

import (
	"context"
	"errors"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/calibra-bench/calibra/internal/cli"
	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/oltp/oltptest"
	"github.com/calibra-bench/calibra/internal/report/browsertest"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/serve"
	"github.com/calibra-bench/calibra/internal/store"
	"github.com/calibra-bench/calibra/internal/testenv"
)

func TestMain(m *testing.M) { clitest.Main(m, cli.Main) }

// A real oltp run on a managed PostgreSQL, recording into a SQLite store:
// while it runs, serve lists it and its live page's transaction counter
// moves in Chromium, a second at a time; once it ends, the page says it
// finished complete, and the store holds the complete run alone.
func TestLivePageFollowsARealRun(t *testing.T) {
	clitest.RequirePostgres(t)
	browser := browsertest.New(t)
	path, tmp := testenv.StorageDir(t), t.TempDir()
	db := filepath.Join(tmp, "store", "results.db")
	clitest.MustRun(t, 0, "oltp", "build", "--warehouses", "1", "--path", path, "--progress", "none", "--store", "none", "--out", filepath.Join(tmp, "build"))
	done := make(chan int, 1)
	go func() {
		// Paced, so as not to take a closed loop's CPU from the packages
		// beside it: the rate a minute is then steady, the New-Orders
		// among it (the mix is dealt at random) are not.
		code, _, _ := clitest.Run(t, "oltp", "run", "--users", "2", "--rampup", "0s", "--duration", "15s", "--path", path,
			oltptest.PacedFlag, "--progress", "none", "--store", "sqlite:"+db, "--out", filepath.Join(tmp, "run"))
		done <- code
	}()
	ctx := context.Background()
	var st *store.Store
	var id string
	for deadline := time.Now().Add(60 * time.Second); id == "" && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if st == nil {
			s, err := store.OpenExisting(ctx, db)
			if errors.Is(err, store.ErrNoStore) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			st = s
			defer st.Close()
		}
		rows, err := st.History(ctx, store.Query{Status: results.StatusRunning})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 1 {
			id = rows[0].ID
		}
	}
	if id == "" {
		t.Fatal("the run did not record itself as running within 60 s")
	}
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = serve.New(st, "live-token-0123456789", srv.Listener.Addr())
	srv.Start()
	defer srv.Close()
	tab, cancel := chromedp.NewContext(browser.Context())
	defer cancel()
	tab, cancelTimeout := context.WithTimeout(tab, 120*time.Second)
	defer cancelTimeout()
	if err := chromedp.Run(tab, chromedp.Navigate(srv.URL+"/t/live-token-0123456789/live?run="+url.QueryEscape(id))); err != nil {
		t.Fatal(err)
	}
	var seen []string
	var status string
	for deadline := time.Now().Add(60 * time.Second); status != results.StatusComplete && time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		var tpm, nopm string
		if err := chromedp.Run(tab, chromedp.Evaluate(`document.getElementById('tpm').textContent`, &tpm),
			chromedp.Evaluate(`document.getElementById('nopm').textContent`, &nopm),
			chromedp.Evaluate(`document.getElementById('live').getAttribute('data-status')`, &status)); err != nil {
			t.Fatal(err)
		}
		if shown := tpm + " " + nopm; tpm != "-" && (len(seen) == 0 || seen[len(seen)-1] != shown) {
			seen = append(seen, shown)
		}
	}
	if len(seen) < 3 {
		t.Errorf("the live counters (transactions and New-Orders a minute) showed %q during the run: want them to move, a second at a time", seen)
	}
	if code := <-done; code != 0 || status != results.StatusComplete {
		t.Errorf("the run exited %d; its live page says %q, want complete", code, status)
	}
	rows, err := st.History(ctx, store.Query{})
	if err != nil || len(rows) != 1 || rows[0].Status != results.StatusComplete {
		t.Errorf("the store holds %+v (%v), want the one run, complete", rows, err)
	}
}
