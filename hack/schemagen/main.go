// Command schemas writes the JSON Schemas editors validate wavesmith's
// documents with (schemas/*.json, make generate) from the CRDs
// controller-gen generates from api/.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/wavesmith/wavesmith/internal/schemagen"
)

func main() {
	out := flag.String("o", "schemas", "output folder")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: schemas [-o DIR] CRD.yaml...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	files, err := schemagen.Generate(flag.Args())
	if err == nil {
		err = schemagen.WriteDir(*out, files)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Println("wrote", filepath.Join(*out, name))
	}
}
