package cli

import (
	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/runner"
)

func (a *app) cleanCommand() *cobra.Command {
	var path string
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "Stop and remove the managed instances, clusters and storage lab under --path",
		Long: `Remove what calibra created on the storage under test at PATH, stopping any
server a crashed calibra left running there first:

` + runner.ManagedDirs() + `  PATH/calibra-instances/K
      the instances of --instances, each as above
  PATH/calibra-lab
      the storage lab a killed run left up (--lab, durability): unmounted,
      its emulated disk and the instance on it removed
  PATH/calibra-device
      device test files a crashed run left

and, wherever they are, the socket directories (/run/calibra-sockets-UID/
calibra-sock-* as root, TMPDIR/... when TMPDIR is set: a directory only
calibra's account can write to) and empty cgroups (calibra-PID) of runs
that were killed. A live run's are never
touched. Run directories are kept.`,
		Example: `  calibra clean --path /mnt/array`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runner.Clean(path, a.stderr)
		},
	}
	cmd.Flags().StringVar(&path, "path", ".", "directory on the storage under test")
	return cmd
}
