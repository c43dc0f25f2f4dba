package ociimage

import (
	"archive/tar"
	"io"
)

func tarReader(r io.Reader) *tar.Reader { return tar.NewReader(r) }
