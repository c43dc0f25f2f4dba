package fsroot

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// MaxFileSize is the largest file wavesmith reads: an input, a values
// file, a file of a chart or of a tree.
const MaxFileSize = 16 << 20

// ReadRegular reads the regular file name below root, at most
// MaxFileSize bytes. The open does not block (O_NONBLOCK), so a FIFO is
// refused at once rather than waited on; devices, sockets and FIFOs are
// ErrNotRegular.
func ReadRegular(root *os.Root, name string) ([]byte, error) {
	f, fi, err := openRegular(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpen(f, fi)
}

// mapRegular is ReadRegular with the bytes mapped where mapFile can
// (MapFile); an empty file, or one the kernel does not map, is read.
func mapRegular(root *os.Root, name string) ([]byte, error) {
	f, fi, err := openRegular(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the mapping outlives the descriptor
	if fi.Size() > 0 {
		if b, ok := mapFile(f, fi.Size()); ok {
			return b, nil
		}
	}
	return readOpen(f, fi)
}

// openRegular opens name below root without blocking and returns it
// with its FileInfo, or the error CheckRegular gives (it is then closed).
func openRegular(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = CheckRegular(fi)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// readOpen reads f, which openRegular opened and found of fi's size, at
// most MaxFileSize bytes.
func readOpen(f *os.File, fi fs.FileInfo) ([]byte, error) {
	// One buffer of the size stat gave, and a byte more to see a file
	// that grew: no growing and copying (a tree holds tens of thousands
	// of files).
	b := make([]byte, 0, fi.Size()+1)
	for {
		if len(b) > MaxFileSize {
			break
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):min(cap(b), MaxFileSize+1)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, MaxFileSize)
	}
	return b, nil
}

// CheckRegular refuses what is not a regular file of at most MaxFileSize
// bytes.
func CheckRegular(fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: it is a %s", ErrNotRegular, ModeName(fi.Mode()))
	}
	if fi.Size() > MaxFileSize {
		return fmt.Errorf("%w: %d bytes, more than %d", ErrTooLarge, fi.Size(), MaxFileSize)
	}
	return nil
}

// ModeName names a file mode for errors: "named pipe (FIFO)", "socket"...
func ModeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	case m.IsDir():
		return "folder"
	}
	return "special file"
}
