package docs

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// markdown is a Markdown file read far enough for these tests: its headings and its text,
// both outside fenced code blocks, and the fenced blocks themselves.
type markdown struct {
	headings []string    // their titles, in order
	text     []string    // the lines outside fenced blocks
	blocks   []codeBlock // fenced blocks, in order
}

type codeBlock struct {
	after string // the title of the heading the block follows
	lines []string
}

var headingRE = regexp.MustCompile(`^#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)

func parse(src string) markdown {
	var md markdown
	var fence string // the fence that opened the current block, "" outside one
	var block []string
	last := ""
	for _, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				md.blocks = append(md.blocks, codeBlock{after: last, lines: block})
				fence, block = "", nil
				continue
			}
			block = append(block, line)
			continue
		}
		if len(line)-len(trimmed) < 4 && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			fence = trimmed[:3]
			continue
		}
		md.text = append(md.text, line)
		if m := headingRE.FindStringSubmatch(line); m != nil {
			md.headings = append(md.headings, m[1])
			last = m[1]
		}
	}
	return md
}

// anchors are the fragment identifiers GitHub gives the headings, in order: a second heading
// with the same anchor gets "-1", a third "-2".
func (md markdown) anchors() map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, h := range md.headings {
		a := anchor(h)
		if n, ok := seen[a]; ok {
			seen[a] = n + 1
			a += "-" + strconv.Itoa(n+1)
		} else {
			seen[a] = 0
		}
		out[a] = true
	}
	return out
}

var inlineLinkRE = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// anchor is GitHub's anchor for a heading: the text as shown (a link's text, not its target),
// lowercased, every character that is not a letter, digit, space, hyphen or underscore
// removed, and spaces made hyphens.
func anchor(title string) string {
	title = inlineLinkRE.ReplaceAllString(title, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var (
	codeSpanRE = regexp.MustCompile("`+[^`]*`+")
	linkRE     = regexp.MustCompile(`\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
)

// links are the targets of the inline links of the text, outside code spans and blocks.
func (md markdown) links() []string {
	text := codeSpanRE.ReplaceAllString(strings.Join(md.text, "\n"), "")
	var out []string
	for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// expand expands the brace lists of a path: pkg/{a,b}/c is pkg/a/c and pkg/b/c.
func expand(path string) []string {
	open := strings.Index(path, "{")
	end := strings.Index(path, "}")
	if open < 0 || end < open {
		return []string{path}
	}
	var out []string
	for _, alt := range strings.Split(path[open+1:end], ",") {
		out = append(out, expand(path[:open]+alt+path[end+1:])...)
	}
	return out
}
