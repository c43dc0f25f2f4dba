package main

import (
	"bufio"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wavesmith/wavesmith/config"
	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/internal/argocdplugin"
	"github.com/wavesmith/wavesmith/internal/outtree"
)

func newDiscoverCommand() *cobra.Command {
	var root string
	c := &cobra.Command{
		Use:   "discover [DIR]...",
		Short: "Print the files that make folders wavesmith's (Argo CD plugin discovery)",
		Long: `Discover prints, one a line, the files that make each folder (default ".")
wavesmith's: a ` + config.ProjectFile + ` project file in it, and every *.yaml,
*.yml or *.json file below it that render would read and that holds a spec
(Kaoto, Component), even one that does not parse, so that the render
reports the mistake rather than another tool taking the folder. It prints
nothing for a folder without specs, and for a tree wavesmith rendered (it,
or a folder above it, holds ` + outtree.RecordFile + `): rendered output is never
input again.

It is the discover.find.command of the Argo CD plugin (kustomize/argocd):
Argo CD takes a folder when the command exits 0 and prints something.`,
		Example: `  wavesmith discover apps/shop`,
		RunE: func(c *cobra.Command, args []string) error {
			usage := func(err error) error { return usageError{cmd: c.CommandPath(), err: err} }
			if c.Flags().Changed("root") && root == "" {
				return usage(errors.New("--root is empty (an unset shell variable?)"))
			}
			if len(args) == 0 {
				args = []string{"."}
			}
			w := bufio.NewWriter(c.OutOrStdout())
			for _, dir := range args {
				if dir == "" {
					return usage(errors.New("an empty DIR (an unset shell variable?): name a folder, \".\" for the current one"))
				}
				r, err := (&renderFlags{root: root}).decideRoot([]string{dir}, "") // the one rule
				if err != nil {
					return usage(err)
				}
				files, err := argocdplugin.Discover(dir, r, builtin.Registry())
				if err != nil {
					return err
				}
				for _, p := range files {
					fmt.Fprintln(w, p)
				}
			}
			if err := w.Flush(); err != nil {
				return fmt.Errorf("writing the list: %w", err)
			}
			return nil
		},
	}
	c.Flags().StringVar(&root, "root", "", "folder nothing is read outside of (default: as for render)")
	return c
}
