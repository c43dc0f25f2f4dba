package ociimage

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// User is the non-root user and group the images run as (distroless's
// "nonroot").
const User = "65532:65532"

// Spec describes one image.
type Spec struct {
	// Binary is the path of a static binary; it becomes /<Name>.
	Binary string
	// Name of the binary in the image and of the image.
	Name string
	// Ref is the image reference written into the tarball.
	Ref string
	// Args are the default arguments (CMD).
	Args []string
	// Labels are OCI labels (org.opencontainers.image.*).
	Labels map[string]string
}

// Build returns the image: an empty base plus one layer holding the
// binary, entrypoint /<Name>, user 65532, the labels, and zero timestamps.
func Build(s Spec) (v1.Image, error) {
	bin, err := os.ReadFile(s.Binary)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", s.Name, err)
	}
	if err := static(bin); err != nil {
		return nil, fmt.Errorf("image %s: %s: %w", s.Name, s.Binary, err)
	}
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	if err := tw.WriteHeader(&tar.Header{Name: s.Name, Mode: 0o555, Size: int64(len(bin)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0), Uid: 0, Gid: 0}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b.Bytes())), nil }, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.AppendLayers(img, layer)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Config.Entrypoint = []string{"/" + s.Name}
	cfg.Config.Cmd = s.Args
	cfg.Config.User = User
	cfg.Config.WorkingDir = "/"
	cfg.Config.Labels = s.Labels
	cfg.Config.Env = []string{"HOME=/"}
	return mutate.ConfigFile(img, cfg)
}

// Write builds the image and writes it as a tarball at path.
func Write(path string, s Spec) error {
	img, err := Build(s)
	if err != nil {
		return err
	}
	ref, err := name.ParseReference(s.Ref)
	if err != nil {
		return fmt.Errorf("image %s: reference %q: %w", s.Name, s.Ref, err)
	}
	return tarball.WriteToFile(path, ref, img)
}

// ErrNotStatic is returned for a binary that cannot run on the empty base:
// not a Linux ELF executable, or linked against a dynamic loader (build
// with CGO_ENABLED=0, as make image does).
var ErrNotStatic = errors.New("not a statically linked Linux executable")

func static(bin []byte) error {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotStatic, err)
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fmt.Errorf("%w: ELF type %v", ErrNotStatic, f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%w: it needs a dynamic loader, which the empty base does not have", ErrNotStatic)
		}
	}
	return nil
}
