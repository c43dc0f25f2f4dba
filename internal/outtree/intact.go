package outtree

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
// platform that keeps none (not Linux, macOS or FreeBSD).
//
// When true, it also returns the Index of the tree as this walk saw it
// (the files it read recorded as they are now, with ix's digests), to be
// stored in place of ix: a file read here is trusted by the next walk
// once it is older than this one, instead of being read every time.
func Intact(dir string, ix *Index) (*Index, bool) {
	if ix == nil || len(ix.Files) == 0 {
		return nil, false
	}
	// Every wanted file is one shared placeholder, known to hold it: a
	// trusted file comes back as the placeholder itself, one read as its
	// bytes, recorded in the walk's Index when they are those of its
	// digest.
	placeholder := []byte{0}
	want := make(map[string][]byte, len(ix.Files))
	for p := range ix.Files {
		want[p] = placeholder
	}
	if err := checkTreeDir(dir); err != nil {
		return nil, false
	}
	got, now, err := readIndexed(dir, want, Known{Index: ix, Files: want, bySum: true})
	// The walk's record holds the files found to hold their entries,
	// trusted or by digest, all of them wanted: as many as wanted, and
	// as many found, is the tree ix records and nothing else.
	if err != nil || now == nil || len(now.Files) != len(want) || len(got) != len(want) {
		return nil, false
	}
	now.Sums = ix.Sums
	return now, true
}
