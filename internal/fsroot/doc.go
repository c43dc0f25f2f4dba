// Package fsroot reads the inputs of a render below a root folder (the
// repository, or under Argo CD the checkout) and never outside it:
// through symlinks neither, regular files only, each under a size cap
// (MaxFileSize).
//
// Root is the one boundary every door reads through; Confine checks a
// path that need not exist yet (an output folder), MkdirAll makes one
// inside the root only. Dir is a folder of a Root opened once, to read
// many files in it with one open each (the inputs of a large render);
// it reads and refuses exactly what the Root does. ListDir lists a folder
// opened in an os.Root as fs.ReadDir does, on Linux with the entry types
// getdents gives (an lstat, relative to the folder, only where it gives
// none) rather than an lstat an entry. ReadRegular and CheckRegular are the file rules
// the output tree (package outtree) reads by too.
package fsroot
