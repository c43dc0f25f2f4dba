//go:build linux || darwin || freebsd

package outtree

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// noRacyMargin trusts a file whose times are older than the record at
// all (instead of RacyMargin or LocalRacyMargin older), so that a test
// sees files trusted without waiting; the record is still taken before
// the walk, so a file written before it is older than it.
func noRacyMargin(t *testing.T) {
	t.Cleanup(SetRacyMarginForTest(0))
}

func indexTree() map[string][]byte {
	files := map[string][]byte{"kustomization.yaml": []byte(Header + "resources: [a, b]\n")}
	for _, d := range []string{"a", "b"} {
		for _, f := range []string{"x.yaml", "y.yaml", "z.yaml"} {
			files[d+"/"+f] = []byte("kind: ConfigMap # " + d + "/" + f + "\n")
		}
	}
	return files
}

// trusted writes files as the tree at dir and verifies it once, so that
// the Index returned trusts every file (noRacyMargin).
func trusted(t *testing.T, dir string, files map[string][]byte) Known {
	t.Helper()
	ix, err := WriteIndexed(context.Background(), "", dir, files, Known{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.Files) != len(files) {
		t.Fatalf("the write recorded %d files, want %d", len(ix.Files), len(files))
	}
	// Without a record every file is read; the record taken then trusts
	// them all: they were written before it.
	got, ix, err := ReadIndexed(dir, files, Known{})
	if err != nil {
		t.Fatal(err)
	}
	if ix.read != len(files) {
		t.Fatalf("the first check read %d files, want every one (%d)", ix.read, len(files))
	}
	if diff := cmp.Diff(files, got); diff != "" {
		t.Fatalf("-want +got:\n%s", diff)
	}
	k := Known{Index: ix, Files: files}
	// Now every file is older than the record: none is read.
	got, again, err := ReadIndexed(dir, files, k)
	if err != nil {
		t.Fatal(err)
	}
	if again.read != 0 {
		t.Fatalf("the second check read %d files, want none", again.read)
	}
	if diff := cmp.Diff(files, got); diff != "" {
		t.Fatalf("-want +got:\n%s", diff)
	}
	if !again.Same(ix) {
		t.Error("an unchanged tree's second Index differs from the first")
	}
	return k
}

// tick changes the file p of dir by edit until its ctime is not the
// recorded one: an edit within one tick of the file system's clock keeps
// it (the racy case, tested apart); the loop ends within a tick.
func tick(t *testing.T, dir, p string, rec FileStat, edit func(string)) {
	t.Helper()
	name := filepath.Join(dir, filepath.FromSlash(p))
	for i := 0; ; i++ {
		edit(name)
		var st unix.Stat_t
		if err := unix.Lstat(name, &st); err != nil {
			t.Fatal(err)
		}
		if st.Ctim.Nano() != rec.Ctime || st.Ino != rec.Ino {
			return
		}
		if i > 1e6 {
			t.Fatal("the file system's clock does not advance")
		}
	}
}

// sameSizeEdit rewrites a file in place with b (of the same size as
// before) and puts its mtime back: only its ctime tells.
func sameSizeEdit(t *testing.T, b []byte, mtime time.Time) func(string) {
	return func(name string) {
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteAt(b, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(name, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIndexedFindsEdits: a tree checked (ReadIndexed) and updated
// (WriteIndexed) with an Index reads no file whose identity is the
// recorded one, and still finds every edit: in place with the size and
// mtime kept (ctime), a file replaced by another inode, an extra and a
// missing file.
func TestIndexedFindsEdits(t *testing.T) {
	noRacyMargin(t)
	want := indexTree()
	const p = "a/y.yaml"
	cases := []struct {
		name  string
		edit  func(t *testing.T, dir string, rec FileStat)
		reads int // files read by the check
		got   func(map[string][]byte)
	}{
		{"in place, size and mtime kept", func(t *testing.T, dir string, rec FileStat) {
			tick(t, dir, p, rec, sameSizeEdit(t, flip(want[p]), time.Unix(0, rec.Mtime)))
		}, 1, func(m map[string][]byte) { m[p] = flip(m[p]) }},
		{"another inode, same size and mtime", func(t *testing.T, dir string, rec FileStat) {
			tick(t, dir, p, rec, func(name string) {
				tmp := name + ".tmp"
				if err := os.WriteFile(tmp, flip(want[p]), 0o644); err != nil {
					t.Fatal(err)
				}
				mtime := time.Unix(0, rec.Mtime)
				if err := os.Chtimes(tmp, mtime, mtime); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(tmp, name); err != nil {
					t.Fatal(err)
				}
			})
		}, 1, func(m map[string][]byte) { m[p] = flip(m[p]) }},
		{"an extra file", func(t *testing.T, dir string, _ FileStat) {
			mustWrite(t, filepath.Join(dir, "a", "extra.yaml"), "extra\n")
		}, 1, func(m map[string][]byte) { m["a/extra.yaml"] = []byte("extra\n") }},
		{"an extra file, the folder's mtime put back", func(t *testing.T, dir string, _ FileStat) {
			extraTimeKept(t, dir, "a")
		}, 1, func(m map[string][]byte) { m["a/extra.yaml"] = []byte("extra\n") }},
		{"a file renamed in its folder", func(t *testing.T, dir string, _ FileStat) {
			if err := os.Rename(filepath.Join(dir, "a", "x.yaml"), filepath.Join(dir, "a", "w.yaml")); err != nil {
				t.Fatal(err)
			}
		}, 1, func(m map[string][]byte) { m["a/w.yaml"] = m["a/x.yaml"]; delete(m, "a/x.yaml") }},
		{"a missing file", func(t *testing.T, dir string, _ FileStat) {
			if err := os.Remove(filepath.Join(dir, "b", "z.yaml")); err != nil {
				t.Fatal(err)
			}
		}, 0, func(m map[string][]byte) { delete(m, "b/z.yaml") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tree")
			k := trusted(t, dir, want)
			c.edit(t, dir, k.Index.Files[p])
			expect := copyFiles(want)
			c.got(expect)

			got, ix, err := ReadIndexed(dir, want, k)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(expect, got); diff != "" {
				t.Errorf("check: -want +got:\n%s", diff)
			}
			if ix.read != c.reads {
				t.Errorf("check read %d files, want %d", ix.read, c.reads)
			}
			for q := range ix.Files {
				if string(got[q]) != string(want[q]) {
					t.Errorf("the check's Index records %s, which does not hold the bytes wanted", q)
				}
			}

			// The update finds the same edit, puts the file back, and
			// returns an Index that trusts it next time.
			ix, err = WriteIndexed(context.Background(), "", dir, want, k)
			if err != nil {
				t.Fatal(err)
			}
			if ix.read != c.reads {
				t.Errorf("update read %d files, want %d", ix.read, c.reads)
			}
			got, err = Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("after the update: -want +got:\n%s", diff)
			}
			if len(ix.Files) != len(want) {
				t.Errorf("the update's Index records %d files, want %d", len(ix.Files), len(want))
			}
			_, again, err := ReadIndexed(dir, want, Known{Index: ix, Files: want})
			if err != nil {
				t.Fatal(err)
			}
			// A file put by the update is as new as the update's record.
			if again.read > 1 {
				t.Errorf("the check after the update read %d files, want at most the one put", again.read)
			}
		})
	}
}

// extraTimeKept writes extra.yaml into the folder d of the tree at dir
// and puts the folder's mtime back, until its ctime tells (tick).
func extraTimeKept(t *testing.T, dir, d string) {
	t.Helper()
	folder := filepath.Join(dir, filepath.FromSlash(d))
	var before unix.Stat_t
	if err := unix.Lstat(folder, &before); err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(0, before.Mtim.Nano())
	tick(t, dir, d, fileStat(&before), func(string) {
		mustWrite(t, filepath.Join(folder, "extra.yaml"), "extra\n")
		if err := os.Chtimes(folder, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	})
}

// TestIndexedTrustsFolders: a folder whose identity is the recorded one
// and trusted is not listed (its entries are the recorded ones: any entry
// added, removed or renamed changes its mtime and ctime), and a change in
// a folder deep down is still found: that folder and those above it,
// up to the top, are listed, and no other.
func TestIndexedTrustsFolders(t *testing.T) {
	noRacyMargin(t)
	want := map[string][]byte{"kustomization.yaml": []byte(Header)}
	for _, d := range []string{"a", "b/c", "b/d", "b/d/e"} {
		for i := range 3 {
			p := fmt.Sprintf("%s/f%d.yaml", d, i)
			want[p] = []byte("kind: ConfigMap # " + p + "\n")
		}
	}
	dir := filepath.Join(t.TempDir(), "tree")
	k := trusted(t, dir, want)
	if diff := cmp.Diff([]string{"a", "b", "b/c", "b/d", "b/d/e"}, slices.Sorted(maps.Keys(k.Index.Dirs))); diff != "" {
		t.Fatalf("folders recorded: -want +got:\n%s", diff)
	}
	_, ix, err := ReadIndexed(dir, want, k)
	if err != nil {
		t.Fatal(err)
	}
	if ix.listed != 0 || ix.read != 0 {
		t.Errorf("a settled tree: %d folders listed, %d files read, want none", ix.listed, ix.read)
	}

	// An extra file in b/d/e, its folder's mtime put back: b/d/e's ctime
	// tells. b/d/e, b/d and b are listed; a and b/c are not.
	extraTimeKept(t, dir, "b/d/e")
	got, ix, err := ReadIndexed(dir, want, k)
	if err != nil {
		t.Fatal(err)
	}
	if string(got["b/d/e/extra.yaml"]) != "extra\n" || len(got) != len(want)+1 {
		t.Errorf("the extra file in a recorded folder was not found: %d files", len(got))
	}
	if ix.listed != 3 || ix.read != 1 {
		t.Errorf("%d folders listed, %d files read; want 3 (b, b/d, b/d/e) and 1", ix.listed, ix.read)
	}
	if _, ok := ix.Dirs["b/d/e"]; ok {
		t.Error("a folder holding a file not wanted is recorded: the next walk would not see the file")
	}
	if _, ok := ix.Dirs["b/c"]; !ok {
		t.Error("a trusted folder is no longer recorded")
	}
}

// TestIndexedRacy: a file whose recorded identity is its identity now
// but whose times are not older than the record (it may have been
// edited within the same tick of the file system's clock after it was
// stat'd) is read, never trusted: with the default margin every file
// just written is read, and a record forged to match an edited file (its
// identity, and a digest of its bytes) is not believed.
func TestIndexedRacy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tree")
	want := indexTree()
	ix, err := WriteIndexed(context.Background(), "", dir, want, Known{})
	if err != nil {
		t.Fatal(err)
	}
	const p = "b/x.yaml"
	rec := ix.Files[p]
	sameSizeEdit(t, flip(want[p]), time.Unix(0, rec.Mtime))(filepath.Join(dir, p))
	// As if the record had been taken after the edit, within one tick.
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(dir, p), &st); err != nil {
		t.Fatal(err)
	}
	ix.Files[p] = fileStat(&st)
	// A digest of the edited bytes, as a record inconsistent with the
	// bytes known would have: only Intact's placeholders compare by
	// digest, real bytes by themselves.
	ix.Sums = map[string]fileSum{p: sha256.Sum256(flip(want[p]))}
	got, again, err := ReadIndexed(dir, want, Known{Index: ix, Files: want})
	if err != nil {
		t.Fatal(err)
	}
	if again.read != len(want) {
		t.Errorf("read %d files, want every one (%d): all are racy", again.read, len(want))
	}
	expect := copyFiles(want)
	expect[p] = flip(want[p])
	if diff := cmp.Diff(expect, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	if _, ok := again.Files[p]; ok {
		t.Errorf("the Index records %s, which does not hold the bytes wanted", p)
	}
}

// TestIndexedForeign: a record of another tree, of other bytes, or that
// does not decode is never believed: every file is read and the result
// is Read's.
func TestIndexedForeign(t *testing.T) {
	noRacyMargin(t)
	want := indexTree()
	dir := filepath.Join(t.TempDir(), "tree")
	k := trusted(t, dir, want)
	other := filepath.Join(t.TempDir(), "other")
	ko := trusted(t, other, want)
	const p = "a/x.yaml"
	sameSizeEdit(t, flip(want[p]), time.Unix(0, k.Index.Files[p].Mtime))(filepath.Join(dir, p))
	expect := copyFiles(want)
	expect[p] = flip(want[p])

	oldBytes := copyFiles(want)
	for q := range oldBytes {
		oldBytes[q] = append([]byte("old "), oldBytes[q]...)
	}
	var corrupt Index
	b, _ := k.Index.MarshalBinary()
	for _, c := range []struct {
		name  string
		known Known
		reads int
	}{
		{"another tree's record", Known{Index: ko.Index, Files: want}, len(want)},
		{"other bytes recorded", Known{Index: k.Index, Files: oldBytes}, len(want)},
		{"no bytes recorded", Known{Index: k.Index}, len(want)},
		{"no record", Known{Files: want}, len(want)},
		{"a record that did not decode", Known{Index: &corrupt, Files: want}, len(want)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ix, err := ReadIndexed(dir, want, c.known)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(expect, got); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
			if ix.read != c.reads {
				t.Errorf("read %d files, want %d", ix.read, c.reads)
			}
		})
	}
	for _, bad := range [][]byte{nil, b[:len(b)-1], append(append([]byte(nil), b...), 0), []byte("wavesmith tree index v1\n")} {
		if err := corrupt.UnmarshalBinary(bad); err == nil {
			t.Errorf("decoded a corrupt record (%d bytes)", len(bad))
		}
	}
	if corrupt.Files != nil {
		t.Error("a failed decode changed the Index")
	}
	var back Index
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(k.Index.Files, back.Files); diff != "" || back.Taken != k.Index.Taken {
		t.Errorf("decode(encode(ix)) differs (Taken %d, %d): %s", back.Taken, k.Index.Taken, diff)
	}
}

func flip(b []byte) []byte {
	c := append([]byte(nil), b...)
	c[len(c)-2] ^= 1
	return c
}

func copyFiles(m map[string][]byte) map[string][]byte {
	c := make(map[string][]byte, len(m))
	for p, b := range m {
		c[p] = b
	}
	return c
}

// TestIndexedAgreesWithRead: whatever edits the tree, the bytes wanted
// and the record went through since the record was taken, an indexed
// check returns what Read returns, and an Index holding exactly the
// files that hold the bytes wanted, each with its lstat identity now;
// an indexed update leaves the files wanted and an Index of all of them.
// (The check builds its result from copies of the bytes wanted and of
// the record when those name every file it trusted: this compares that
// shortcut with a walk that trusts nothing.)
func TestIndexedAgreesWithRead(t *testing.T) {
	noRacyMargin(t)
	base := map[string][]byte{"kustomization.yaml": []byte(Header)}
	for _, d := range []string{"a", "b/c", "b/d", "e"} {
		for i := range 6 {
			p := fmt.Sprintf("%s/f%d.yaml", d, i)
			base[p] = []byte("kind: ConfigMap # " + p + "\n")
		}
	}
	paths := slices.Sorted(maps.Keys(base))
	edits := []struct {
		name string
		do   func(t *testing.T, dir string, want map[string][]byte, k *Known, p string)
	}{
		{"edit on disk", func(t *testing.T, dir string, _ map[string][]byte, k *Known, p string) {
			if rec, ok := k.Index.Files[p]; ok {
				tick(t, dir, p, rec, sameSizeEdit(t, flip(base[p]), time.Unix(0, rec.Mtime)))
			}
		}},
		{"extra on disk", func(t *testing.T, dir string, _ map[string][]byte, _ *Known, p string) {
			mustWrite(t, filepath.Join(dir, filepath.FromSlash(p)+".extra"), "extra\n")
		}},
		{"removed from disk", func(t *testing.T, dir string, _ map[string][]byte, _ *Known, p string) {
			_ = os.Remove(filepath.Join(dir, filepath.FromSlash(p)))
		}},
		{"new file wanted", func(_ *testing.T, _ string, want map[string][]byte, _ *Known, p string) {
			want[p+".new"] = []byte("new\n")
		}},
		{"file no longer wanted", func(_ *testing.T, _ string, want map[string][]byte, _ *Known, p string) {
			delete(want, p)
		}},
		{"other bytes wanted", func(_ *testing.T, _ string, want map[string][]byte, _ *Known, p string) {
			want[p] = flip(base[p])
		}},
		{"record dropped", func(_ *testing.T, _ string, _ map[string][]byte, k *Known, p string) {
			delete(k.Index.Files, p)
		}},
		{"record of a file not there", func(_ *testing.T, _ string, _ map[string][]byte, k *Known, p string) {
			k.Index.Files[p+".gone"] = k.Index.Files[p]
		}},
	}
	rng := rand.New(rand.NewPCG(21, 21))
	planned := 0
	defer func() {
		// Both ways are taken: some rounds only change bytes of files
		// there, others add, remove or plant files.
		if planned == 0 || planned == 40 {
			t.Errorf("%d of 40 updates planned from the files read alone: want some, not all", planned)
		}
	}()
	for round := range 40 {
		dir := filepath.Join(t.TempDir(), "tree")
		k := trusted(t, dir, base)
		k.Index = &Index{Taken: k.Index.Taken, Files: maps.Clone(k.Index.Files)}
		want := base
		if round%4 != 0 { // a quarter of the rounds want the very map known
			want = maps.Clone(base)
		}
		var did []string
		for range rng.IntN(4) {
			e, p := edits[rng.IntN(len(edits))], paths[rng.IntN(len(paths))]
			if (e.name == "new file wanted" || e.name == "file no longer wanted" || e.name == "other bytes wanted") && round%4 == 0 {
				continue // the map known stays as known
			}
			e.do(t, dir, want, &k, p)
			did = append(did, e.name+" "+p)
		}
		got, ix, err := ReadIndexed(dir, want, k)
		if err != nil {
			t.Fatal(err)
		}
		disk, err := Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(disk, got); diff != "" {
			t.Errorf("round %d %q: check: -Read +ReadIndexed:\n%s", round, did, diff)
		}
		if diff := cmp.Diff(identities(t, dir, disk, want), ix.Files); diff != "" {
			t.Errorf("round %d %q: check's Index: -want +got:\n%s", round, did, diff)
		}
		// The update's plan from the files read alone is the plan from
		// every file.
		cur, ws, err := walkTree(dir, want, k)
		if err != nil {
			t.Fatal(err)
		}
		if j, ok := planRead(ws, want); ok {
			planned++
			if diff := cmp.Diff(plan(ws.tree(cur, want), want), j, cmp.AllowUnexported(journal{})); diff != "" {
				t.Errorf("round %d %q: plan from the files read: -plan +planRead:\n%s", round, did, diff)
			}
		}
		ix, err = WriteIndexed(context.Background(), "", dir, want, k)
		if err != nil {
			t.Fatal(err)
		}
		disk, err = Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, disk); diff != "" {
			t.Errorf("round %d %q: update: -want +got:\n%s", round, did, diff)
		}
		if diff := cmp.Diff(identities(t, dir, disk, want), ix.Files); diff != "" {
			t.Errorf("round %d %q: update's Index: -want +got:\n%s", round, did, diff)
		}
		// The next check with the update's Index (its folders recorded
		// before the update, those it changed forgotten) sees the tree.
		if got, _, err = ReadIndexed(dir, want, Known{Index: ix, Files: want}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(disk, got); diff != "" {
			t.Errorf("round %d %q: check after the update: -Read +ReadIndexed:\n%s", round, did, diff)
		}
	}
}

// identities is the lstat identity of each file of disk (the tree at
// dir) that holds want's bytes.
func identities(t *testing.T, dir string, disk, want map[string][]byte) map[string]FileStat {
	t.Helper()
	out := map[string]FileStat{}
	for p, b := range disk {
		if w, ok := want[p]; !ok || string(w) != string(b) {
			continue
		}
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(dir, filepath.FromSlash(p)), &st); err != nil {
			t.Fatal(err)
		}
		out[p] = fileStat(&st)
	}
	return out
}

// TestTrustsRule: an identity is trusted LocalRacyMargin after the record
// only on the tree's own local file system and with times finer than a
// millisecond; anywhere else RacyMargin; never when the clock went back.
func TestTrustsRule(t *testing.T) {
	const taken = int64(1_800_000_000_123_456_789)
	ix := &Index{Taken: taken}
	local := racyRule{now: taken + 1, dev: 7, local: true}
	at := func(ago time.Duration, dev uint64) FileStat {
		ns := taken - int64(ago)
		return FileStat{Mtime: ns, Ctime: ns, Dev: dev}
	}
	whole := func(st FileStat) FileStat {
		st.Mtime -= st.Mtime % 1e6
		st.Ctime -= st.Ctime % 1e6
		return st
	}
	for _, c := range []struct {
		name string
		rec  FileStat
		rule racyRule
		want bool
	}{
		{"local, past the local margin", at(LocalRacyMargin+time.Millisecond, 7), local, true},
		{"local, within the local margin", at(LocalRacyMargin-time.Millisecond, 7), local, false},
		{"local, whole milliseconds", whole(at(LocalRacyMargin+time.Millisecond, 7)), local, false},
		{"local, whole milliseconds past RacyMargin", whole(at(RacyMargin+time.Millisecond, 7)), local, true},
		{"another device", at(LocalRacyMargin+time.Millisecond, 8), local, false},
		{"another device past RacyMargin", at(RacyMargin+time.Millisecond, 8), local, true},
		{"not local", at(LocalRacyMargin+time.Millisecond, 7), racyRule{now: taken + 1, dev: 7}, false},
		{"not local past RacyMargin", at(RacyMargin+time.Millisecond, 7), racyRule{now: taken + 1, dev: 7}, true},
		{"the clock went back", at(RacyMargin+time.Millisecond, 7), racyRule{now: taken - 1, dev: 7, local: true}, false},
	} {
		if got := ix.trusts(c.rec, c.rule); got != c.want {
			t.Errorf("%s: trusts = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestIndexedSharesWhatItReadNothingOf: a check that reads nothing (every
// file trusted) records the Index it was given, its map shared rather
// than copied; the next update, which reads the file edited and writes
// it, records its own identities and leaves that Index as it was (an
// update copies before it writes). The control: the check's Index does
// share the map, so a write into it would show.
func TestIndexedSharesWhatItReadNothingOf(t *testing.T) {
	noRacyMargin(t)
	want := indexTree()
	dir := filepath.Join(t.TempDir(), "tree")
	k := trusted(t, dir, want)
	_, ix, err := ReadIndexed(dir, want, k)
	if err != nil {
		t.Fatal(err)
	}
	if ix.read != 0 {
		t.Fatalf("the check read %d files, want none", ix.read)
	}
	if reflect.ValueOf(ix.Files).UnsafePointer() != reflect.ValueOf(k.Index.Files).UnsafePointer() {
		t.Fatal("the check copied the Index's identities: it read nothing")
	}
	before := maps.Clone(ix.Files)
	const p = "a/y.yaml"
	tick(t, dir, p, ix.Files[p], sameSizeEdit(t, flip(want[p]), time.Unix(0, ix.Files[p].Mtime)))
	after, err := WriteIndexed(context.Background(), "", dir, want, Known{Index: ix, Files: want})
	if err != nil {
		t.Fatal(err)
	}
	if after.read != 1 || after.wrote != 1 {
		t.Fatalf("the update read %d and wrote %d files, want 1 and 1", after.read, after.wrote)
	}
	if diff := cmp.Diff(before, ix.Files); diff != "" {
		t.Errorf("the update changed the Index it was given: -before +after:\n%s", diff)
	}
	if after.Files[p] == before[p] {
		t.Errorf("the update did not record the identity of %s it wrote", p)
	}
}
