package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the repository's root, from this package's directory.
var root = filepath.Join("..", "..", "..")

func readme(t *testing.T) markdown {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return parse(string(b))
}

// packagePathRE is a package path as the Layout writes it; trailing punctuation is not part of it.
var packagePathRE = regexp.MustCompile(`\b(?:pkg|cmd)/[A-Za-z0-9_./{},-]*[A-Za-z0-9_}]`)

// TestLayoutNamesEveryPackage: the code block under README.md's "## Layout" names every
// package directory under pkg/ and cmd/ (a directory with Go files, testdata apart), each by
// its whole path (pkg/controller/{machine,health} names two), and names only packages that exist.
func TestLayoutNamesEveryPackage(t *testing.T) {
	md := readme(t)
	var layout *codeBlock
	for i, b := range md.blocks {
		if b.after == "Layout" {
			layout = &md.blocks[i]
			break
		}
	}
	if layout == nil {
		t.Fatal(`README.md has no code block under "## Layout"`)
	}
	named := map[string]bool{}
	for _, line := range layout.lines {
		for _, m := range packagePathRE.FindAllString(line, -1) {
			for _, p := range expand(m) {
				named[strings.TrimSuffix(p, "/")] = true
			}
		}
	}

	var onDisk []string
	for _, top := range []string{"pkg", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(name, ".go") {
				rel, _ := filepath.Rel(root, filepath.Dir(path))
				if rel = filepath.ToSlash(rel); !slices.Contains(onDisk, rel) {
					onDisk = append(onDisk, rel)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(onDisk) < 40 {
		t.Fatalf("found only %d packages under pkg/ and cmd/; the walk is broken", len(onDisk))
	}
	for _, p := range onDisk {
		if !named[p] {
			t.Errorf("README.md's Layout does not name package %s: add it with a line from its package doc", p)
		}
	}
	for p := range named {
		if !slices.Contains(onDisk, p) {
			t.Errorf("README.md's Layout names %s, which is not a package directory", p)
		}
	}
}

// TestReadmeLinksResolve: every relative link of README.md resolves: a path to a file or
// directory of the repository, and an anchor (#heading alone, or after a Markdown file's path)
// to a heading of that file, with GitHub's anchors.
func TestReadmeLinksResolve(t *testing.T) {
	md := readme(t)
	links := md.links()
	if len(links) < 10 {
		t.Fatalf("found only %d links in README.md; the parser is broken", len(links))
	}
	anchors := map[string]map[string]bool{"README.md": md.anchors()}
	for _, link := range links {
		if link == "" || strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
			continue
		}
		path, frag, _ := strings.Cut(link, "#")
		file := "README.md"
		if path != "" {
			file = filepath.ToSlash(filepath.Clean(path))
			if strings.HasPrefix(path, "/") || strings.HasPrefix(file, "../") {
				t.Errorf("link %q leaves the repository", link)
				continue
			}
			if _, err := os.Stat(filepath.Join(root, file)); err != nil {
				t.Errorf("link %q: %s does not exist", link, file)
				continue
			}
		}
		if frag == "" {
			continue
		}
		if !strings.HasSuffix(file, ".md") {
			t.Errorf("link %q: an anchor into %s, which is not Markdown", link, file)
			continue
		}
		if anchors[file] == nil {
			b, err := os.ReadFile(filepath.Join(root, file))
			if err != nil {
				t.Fatal(err)
			}
			anchors[file] = parse(string(b)).anchors()
		}
		if !anchors[file][frag] {
			t.Errorf("link %q: %s has no heading with anchor #%s", link, file, frag)
		}
	}
}
