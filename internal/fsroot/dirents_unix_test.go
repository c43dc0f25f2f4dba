//go:build linux || darwin || freebsd

package fsroot

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// direntRecord is one record of the system's struct dirent (unix.Dirent)
// naming name, of the type typ, padded to 8 bytes as the kernel pads it.
func direntRecord(name string, typ uint8) []byte {
	n := (direntName + len(name) + 1 + 7) &^ 7
	b := make([]byte, n)
	binary.NativeEndian.PutUint16(b[direntReclen:], uint16(n))
	b[direntType] = typ
	copy(b[direntName:], name)
	return b
}

type direntSeen struct {
	Name string
	Type uint8
}

// TestParseDirents: the records of a listing give their names and types,
// "." and ".." left out, a name ending at its NUL; a record cut short or
// with a length that does not fit is an error, not a name.
func TestParseDirents(t *testing.T) {
	list := slices.Concat(
		direntRecord(".", unix.DT_DIR),
		direntRecord("..", unix.DT_DIR),
		direntRecord("a.yaml", unix.DT_REG),
		direntRecord("sub", unix.DT_DIR),
		direntRecord("...", unix.DT_LNK),
	)
	var got []direntSeen
	if err := parseDirents(list, func(name []byte, typ uint8) { got = append(got, direntSeen{string(name), typ}) }); err != nil {
		t.Fatal(err)
	}
	want := []direntSeen{{"a.yaml", unix.DT_REG}, {"sub", unix.DT_DIR}, {"...", unix.DT_LNK}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries -want +got:\n%s", diff)
	}

	short := direntRecord("a.yaml", unix.DT_REG)
	tooSmall := direntRecord("a.yaml", unix.DT_REG)
	binary.NativeEndian.PutUint16(tooSmall[direntReclen:], uint16(direntName-1))
	tooLong := direntRecord("a.yaml", unix.DT_REG)
	binary.NativeEndian.PutUint16(tooLong[direntReclen:], uint16(len(tooLong)+8))
	for name, b := range map[string][]byte{
		"cut before the name": short[:direntName-1],
		"length below a name": tooSmall,
		"length past the end": tooLong,
		"second record cut":   slices.Concat(direntRecord("x", unix.DT_REG), short[:direntName-1]),
	} {
		t.Run(name, func(t *testing.T) {
			err := parseDirents(b, func([]byte, uint8) {})
			if !errors.Is(err, errMalformedDirent) {
				t.Errorf("got %v, want %v", err, errMalformedDirent)
			}
		})
	}
}

// TestReadDirents: a real folder listed through the system's call gives
// what os.ReadDir gives, names and types, across several calls (a buffer
// of 256 bytes holds a few records).
func TestReadDirents(t *testing.T) {
	dir := t.TempDir()
	for i := range 40 {
		if err := os.WriteFile(filepath.Join(dir, "file-"+string(rune('a'+i%26))+string(rune('a'+i/26))+".yaml"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	want := map[string]os.FileMode{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		want[e.Name()] = e.Type()
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	got := map[string]os.FileMode{}
	if err := ReadDirents(fd, make([]byte, 256), func(name []byte, typ uint8) {
		mode, ok := DirentMode(typ)
		if !ok {
			t.Errorf("%s: no type given", name)
		}
		got[string(name)] = mode
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("listing -os.ReadDir +ReadDirents:\n%s", diff)
	}
}
