package lab

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFlashCacheSurvivesAPowerCut: what the flash cache acknowledged is
// read back after its server died without a word (the platter never got
// it); a volatile cache loses it; a clean close destages it all to the
// platter and removes the cache.
func TestFlashCacheSurvivesAPowerCut(t *testing.T) {
	for _, c := range []struct {
		name     string
		volatile bool
	}{{"non-volatile", false}, {"volatile", true}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			platter := filepath.Join(dir, "platter")
			if err := os.WriteFile(platter, make([]byte, 1<<20), 0o600); err != nil {
				t.Fatal(err)
			}
			// The cache's directory is the stack's to make, private.
			if err := os.Mkdir(filepath.Join(dir, "cache"), 0o700); err != nil {
				t.Fatal(err)
			}
			// A platter write takes an hour: nothing is destaged before the cut.
			cfg := TierConfig{Platter: platter, WDelay: time.Hour, Spindles: 2, CacheDir: filepath.Join(dir, "cache"),
				CacheBytes: 64 << 10, Volatile: c.volatile}
			before, err := OpenTier(cfg)
			if err != nil {
				t.Fatal(err)
			}
			data := bytes.Repeat([]byte("acknowledged"), 3*blockSize/12+1)[:3*blockSize]
			if err := before.WriteAt(data, 5*blockSize); err != nil {
				t.Fatal(err)
			}
			if err := before.WriteAt([]byte("overwritten"), 6*blockSize); err != nil {
				t.Fatal(err)
			}
			copy(data[blockSize:], "overwritten")
			if err := before.Flush(); err != nil {
				t.Fatal(err)
			}
			// The power cut: before is abandoned as it is, its destagers asleep.
			after, err := OpenTier(cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(data))
			if err := after.ReadAt(got, 5*blockSize); err != nil {
				t.Fatal(err)
			}
			want := data
			if c.volatile {
				want = make([]byte, len(data)) // the platter's zeros
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("after the cut read %q..., want %q...", got[:24], want[:24])
			}
			if c.volatile {
				return
			}
			// Back again with a quick platter, and shut down cleanly.
			cfg.WDelay = 0
			last, err := OpenTier(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := last.Close(); err != nil {
				t.Fatal(err)
			}
			onPlatter, _ := os.ReadFile(platter)
			if !bytes.Equal(onPlatter[5*blockSize:8*blockSize], data) {
				t.Fatalf("a clean close left the platter without the cached blocks")
			}
			if _, err := os.Stat(cfg.CacheDir); !os.IsNotExist(err) {
				t.Fatalf("a clean close left the cache: %v", err)
			}
		})
	}
}
