// Command archive writes one release archive, byte for byte the same
// from the same files: a .tar.gz (entries sorted by name, owner 0:0 and
// no names, every time SOURCE_DATE_EPOCH, gzip without name or time) or
// a .zip (sorted, the same time, no extra attributes). An executable
// keeps mode 0755, any other file 0644. make release runs it once per
// platform.
//
//	go run ./hack/archive -o dist/wavesmith_v1.2.3_linux_amd64.tar.gz -mtime 1764159319 bin/wavesmith README.md
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

func main() {
	out := flag.String("o", "", "the archive to write: NAME.tar.gz or NAME.zip")
	mtime := flag.Int64("mtime", 0, "the time of every entry, in seconds since 1970 (SOURCE_DATE_EPOCH)")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: archive -o NAME.tar.gz|NAME.zip [-mtime SECONDS] FILE...")
		os.Exit(2)
	}
	if err := write(*out, time.Unix(*mtime, 0).UTC(), flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "archive:", err)
		os.Exit(1)
	}
}

type entry struct {
	name string // the file's base name in the archive
	mode int64
	data []byte
}

// write writes the archive to a temporary file beside out, then renames
// it: a failed run leaves no half archive.
func write(out string, mtime time.Time, files []string) error {
	var entries []entry
	seen := map[string]string{}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file", f)
		}
		name := filepath.Base(f)
		if other, ok := seen[name]; ok {
			return fmt.Errorf("%s and %s both are %s in the archive", other, f, name)
		}
		seen[name] = f
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		mode := int64(0o644)
		if fi.Mode()&0o111 != 0 {
			mode = 0o755
		}
		entries = append(entries, entry{name: name, mode: mode, data: b})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	var buf bytes.Buffer
	var err error
	switch {
	case strings.HasSuffix(out, ".tar.gz"):
		err = writeTarGz(&buf, mtime, entries)
	case strings.HasSuffix(out, ".zip"):
		err = writeZip(&buf, mtime, entries)
	default:
		return fmt.Errorf("%s: want a .tar.gz or a .zip", out)
	}
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".archive-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}

func writeTarGz(w io.Writer, mtime time.Time, entries []entry) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression) // no Name, ModTime 0
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: e.mode, Size: int64(len(e.data)),
			ModTime: mtime, Format: tar.FormatUSTAR} // uid, gid 0, no user or group names
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(w io.Writer, mtime time.Time, entries []entry) error {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestCompression)
	})
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: mtime}
		h.SetMode(os.FileMode(e.mode))
		f, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := f.Write(e.data); err != nil {
			return err
		}
	}
	return zw.Close()
}
