package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version is calibra's version, set at build time with -ldflags
// (release.sh and the Dockerfile set it); results.json records it.
var Version = "0.1.0-dev"

// Commit, CommitModified ("true" or "false") and CommitTime name the
// commit built, set with -ldflags by release.sh and the Dockerfile. They
// win over the vcs.* settings Go stamps itself, which a git worktree
// lacks (its .git is a file, golang/go#58218) or takes from an enclosing
// repository, and an image built without .git lacks too.
var (
	Commit         = ""
	CommitModified = ""
	CommitTime     = ""
)

// build is what 'calibra version' says of the binary.
type build struct {
	Version  string // calibra's, as -ldflags set it
	Module   string // the module's path and version, "(devel)" for a local build
	Commit   string // "" when unknown
	Modified string // "true", "false" or "" (unknown)
	Time     string // the commit's time, "" when unknown
	Go       string
	Platform string
}

// readBuild reads the binary's build info: the commit -ldflags set, else
// the vcs.* settings Go stamped.
func readBuild() build {
	b := build{Version: Version, Commit: Commit, Modified: CommitModified, Time: CommitTime, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Go = info.GoVersion
	b.Module = info.Main.Path + " " + info.Main.Version
	var vcs build
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			vcs.Commit = s.Value
		case "vcs.modified":
			vcs.Modified = s.Value
		case "vcs.time":
			vcs.Time = s.Value
		}
	}
	if b.Commit == "" && vcs.Commit != "" {
		b.Commit, b.Modified, b.Time = vcs.Commit, vcs.Modified, vcs.Time
	}
	return b
}

func (b build) write(w io.Writer) {
	fmt.Fprintf(w, "calibra %s\n", b.Version)
	if b.Module != "" {
		fmt.Fprintf(w, "  module    %s\n", b.Module)
	}
	commit := "unknown: built without VCS information (in a git worktree, with -buildvcs=false or without .git); release.sh and the Dockerfile stamp it"
	if b.Commit != "" {
		commit = b.Commit
		switch b.Modified {
		case "true":
			commit += " with uncommitted changes"
		case "":
			commit += " (whether it had uncommitted changes is not recorded)"
		}
	}
	fmt.Fprintf(w, "  commit    %s\n", commit)
	if b.Time != "" {
		fmt.Fprintf(w, "  committed %s\n", b.Time)
	}
	fmt.Fprintf(w, "  go        %s %s\n", b.Go, b.Platform)
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print calibra's version, the commit it was built from and its Go version",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			readBuild().write(a.stdout)
			return nil
		},
	}
}
