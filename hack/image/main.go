// Command image writes the OCI image tarballs of wavesmith and
// wavesmith-status (make image), without a container daemon.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wavesmith/wavesmith/internal/ociimage"
)

func main() {
	wavesmith := flag.String("wavesmith", "out/images/bin/wavesmith", "static wavesmith binary")
	status := flag.String("status", "out/images/bin/wavesmith-status", "static wavesmith-status binary")
	version := flag.String("version", "dev", "image tag and version label")
	out := flag.String("o", "out/images", "output folder")
	flag.Parse()
	for _, s := range ociimage.Specs(*wavesmith, *status, *version) {
		p := filepath.Join(*out, s.Name+".tar")
		if err := ociimage.Write(p, s); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
		fmt.Println("wrote", p, s.Ref)
	}
}
