package outtree

// Intact reports whether the tree at dir holds exactly the files ix
// records, each with its recorded lstat identity and trusted (not racy,
// see Index): then every file holds the bytes it held when ix was taken,
// which the caller keeps (the tree cache's entry) and need not load to
// know the tree unchanged. No file is read when the answer is true: the
// folders are listed and the files lstat'd as ReadIndexed does. Anything
// else is false: a missing or spoiled tree, a file added, removed,
// changed or racy, a tree holding MarkerFile, no Index, a platform that
// keeps none (not Linux).
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
	got, _, err := ReadIndexed(dir, want, Known{Index: ix, Files: want})
	if err != nil || len(got) != len(want) {
		return false
	}
	for p, b := range got {
		if _, ok := want[p]; !ok || len(b) != 1 || &b[0] != &placeholder[0] {
			return false
		}
	}
	return true
}
