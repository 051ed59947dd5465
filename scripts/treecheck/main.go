// Command treecheck fails when the repository tracks a build output or a
// large file: `make lint` runs it from the repository's root.
//
// It reads the files git tracks (git ls-files) and reports
//
//   - a compiled file, by its first bytes: an ELF, Mach-O or PE
//     executable or library, a Java class, a WebAssembly module, an ar
//     archive (.a, .deb);
//   - a file named as a build output: .jar, .war, .ear, .aar, .class, .o,
//     .a, .so, .dylib, .dll, .exe, .pyc, .test, .pprof;
//   - a file in a results directory (bench/results, say) that is not an
//     SVG chart: a raw result dump or a profile listing (the charts are the
//     docs' figures, and stay);
//   - a file with the run bit that is not a script (does not start with #!);
//   - a file over 1 MiB outside a testdata directory.
//
// Scripts with the run bit are fine. It prints one line per finding and
// exits 1 when there is any, 2 when git cannot list the files.
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// maxSize is the largest file kept outside testdata.
const maxSize = 1 << 20

// buildExts are the names of build outputs, whatever their content.
var buildExts = map[string]string{
	".jar": "a Java archive", ".war": "a Java archive", ".ear": "a Java archive", ".aar": "an Android archive",
	".class": "a Java class", ".o": "an object file", ".a": "a static library", ".so": "a shared library",
	".dylib": "a shared library", ".dll": "a Windows library", ".exe": "a Windows executable",
	".pyc": "compiled Python", ".test": "a Go test binary", ".pprof": "a profile (build output)",
}

// entry is one tracked file: its path relative to the root and whether git
// records it executable.
type entry struct {
	path string
	exec bool
}

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	files, err := tracked(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "treecheck:", err)
		os.Exit(2)
	}
	findings, err := check(root, files)
	if err != nil {
		fmt.Fprintln(os.Stderr, "treecheck:", err)
		os.Exit(2)
	}
	for _, f := range findings {
		fmt.Println(f)
	}
	if len(findings) > 0 {
		fmt.Printf("treecheck: %d tracked file(s) look like build outputs or are too large: remove them (git rm --cached) "+
			"and ignore them in .gitignore; a large file that is test data belongs under a testdata directory\n", len(findings))
		os.Exit(1)
	}
}

// tracked lists the files git tracks under root, with their modes.
func tracked(root string) ([]entry, error) {
	cmd := exec.Command("git", "ls-files", "-s", "-z")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var files []entry
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		// <mode> <object> <stage>\t<path>
		meta, p, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			return nil, fmt.Errorf("git ls-files: unexpected record %q", rec)
		}
		mode := string(bytes.Fields(meta)[0])
		if mode == "120000" || mode == "160000" { // a symlink, a submodule
			continue
		}
		files = append(files, entry{path: string(p), exec: mode == "100755"})
	}
	return files, nil
}

// check returns one line per tracked file that is a build output or too
// large. A file git tracks but the work tree lacks is skipped.
func check(root string, files []entry) ([]string, error) {
	var findings []string
	seen := map[string]bool{}
	for _, f := range files {
		if seen[f.path] { // the stages of a conflict
			continue
		}
		seen[f.path] = true
		why, err := inspect(filepath.Join(root, filepath.FromSlash(f.path)), f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if why != "" {
			findings = append(findings, f.path+": "+why)
		}
	}
	return findings, nil
}

// inspect says why one file must not be tracked, or "".
func inspect(name string, f entry) (string, error) {
	fh, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return "", err
	}
	head := make([]byte, 512)
	n, err := io.ReadFull(fh, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return "", err
	}
	head = head[:n]
	if kind := compiled(head); kind != "" {
		return kind, nil
	}
	if kind, ok := buildExts[strings.ToLower(path.Ext(f.path))]; ok {
		return kind, nil
	}
	if resultDump(f.path) {
		return "a result dump (only the .svg charts of a results directory are kept)", nil
	}
	if f.exec && !bytes.HasPrefix(head, []byte("#!")) {
		return "executable but not a script (no #! line)", nil
	}
	if st.Size() > maxSize && !testData(f.path) {
		return fmt.Sprintf("%d bytes, over 1 MiB, outside testdata", st.Size()), nil
	}
	return "", nil
}

// resultDump reports whether a path is a file of a results directory
// outside testdata, other than an SVG chart.
func resultDump(p string) bool {
	if testData(p) || strings.ToLower(path.Ext(p)) == ".svg" {
		return false
	}
	for _, dir := range strings.Split(path.Dir(p), "/") {
		if dir == "results" {
			return true
		}
	}
	return false
}

// testData reports whether a path lies in a testdata directory.
func testData(p string) bool {
	for _, dir := range strings.Split(path.Dir(p), "/") {
		if dir == "testdata" {
			return true
		}
	}
	return false
}

// compiled names the compiled format a file's first bytes show, or "".
func compiled(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x7fELF")):
		return "an ELF binary"
	case len(head) >= 4 && machO(binary.BigEndian.Uint32(head)):
		return "a Mach-O binary"
	case bytes.HasPrefix(head, []byte{0xca, 0xfe, 0xba, 0xbe}):
		return "a Java class or a universal Mach-O binary"
	case pe(head):
		return "a PE (Windows) binary"
	case bytes.HasPrefix(head, []byte("\x00asm")):
		return "a WebAssembly module"
	case bytes.HasPrefix(head, []byte("!<arch>\n")):
		return "an ar archive (a static library or a package)"
	case bytes.HasPrefix(head, []byte("go object ")):
		return "a Go object file"
	}
	return ""
}

// machO reports whether a file's first word is a thin Mach-O magic, in
// either byte order.
func machO(w uint32) bool {
	switch w {
	case 0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe:
		return true
	}
	return false
}

// pe reports whether a file is a PE image: "MZ", and at the offset stored at
// 0x3c the signature "PE\0\0" (within the bytes read).
func pe(head []byte) bool {
	if !bytes.HasPrefix(head, []byte("MZ")) || len(head) < 0x40 {
		return false
	}
	off := int(binary.LittleEndian.Uint32(head[0x3c:]))
	if off >= 0x40 && off+4 <= len(head) {
		return bytes.Equal(head[off:off+4], []byte("PE\x00\x00"))
	}
	return bytes.Contains(head, []byte("This program cannot be run in DOS mode"))
}
