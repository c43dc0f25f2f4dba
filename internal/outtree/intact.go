package outtree

import "crypto/sha256"

// Intact reports whether the tree at dir holds exactly the files ix
// records, each with its recorded lstat identity and trusted (not racy,
// see Index), or read and holding the bytes of its digest in ix.Sums:
// then every file holds the bytes it held when ix was taken, which the
// caller keeps (the tree cache's entry) and need not load to know the
// tree unchanged. Only racy files are read (a render that changed a few
// specs leaves those it wrote racy, each with its digest): the folders
// are listed and the files lstat'd as ReadIndexed does. Anything else is
// false: a missing or spoiled tree, a file added, removed or changed, a
// racy file without a digest, a tree holding MarkerFile, no Index, a
// platform that keeps none (not Linux).
func Intact(dir string, ix *Index) bool {
	if ix == nil || len(ix.Files) == 0 {
		return false
	}
	// Every wanted file is one shared placeholder, known to hold it: a
	// trusted file comes back as the placeholder itself, any other as
	// the bytes read.
	placeholder := []byte{0}
	want := make(map[string][]byte, len(ix.Files))
	for p := range ix.Files {
		want[p] = placeholder
	}
	if err := checkTreeDir(dir); err != nil {
		return false
	}
	got, _, err := readIndexed(dir, want, Known{Index: ix, Files: want})
	if err != nil || len(got) != len(want) {
		return false
	}
	for p, b := range got {
		if _, ok := want[p]; !ok {
			return false
		}
		if len(b) == 1 && &b[0] == &placeholder[0] {
			continue
		}
		if sum, ok := ix.Sums[p]; !ok || sha256.Sum256(b) != sum {
			return false
		}
	}
	return true
}
