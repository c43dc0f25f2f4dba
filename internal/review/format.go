package review

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Formats a report is written in.
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
)

// Formats lists the formats, for flags and messages.
var Formats = []string{FormatText, FormatMarkdown, FormatJSON}

// DefaultMarkdownLimit keeps a Markdown report under GitHub's limit for a
// comment (65,536 characters) with room for a heading of the CI's own.
const DefaultMarkdownLimit = 60000

// Summary is the report's first line: what it compares and the counts.
func (r *Report) Summary() string {
	if r.Empty() {
		return fmt.Sprintf("%s -> %s: no difference in the rendered objects", r.Base, r.Head)
	}
	return fmt.Sprintf("%s -> %s: %d added, %d removed, %d changed", r.Base, r.Head, r.Added, r.Removed, r.Changed)
}

// lifecycleText is "apply-order 0 -> 2, update-policy ssa-override -> recreate".
func lifecycleText(cs []AnnotationChange, arrow string) string {
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s %s %s %s", strings.TrimPrefix(c.Annotation, "wavesmith.io/"), orNone(c.Base), arrow, orNone(c.Head)))
	}
	return strings.Join(parts, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// WriteText writes the report for a terminal: the summary, the objects
// whose wave, hook or policy changed, then one unified diff per object.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	b.WriteString(r.Summary() + "\n")
	if n := r.lifecycleCount(); n > 0 {
		b.WriteString("\nwaves, hooks and policies:\n")
		for _, e := range r.Entries[:n] {
			fmt.Fprintf(&b, "  %s: %s\n", e.Object, lifecycleText(e.Lifecycle, "->"))
		}
	}
	for _, e := range r.Entries {
		b.WriteString("\n" + e.Diff)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// lifecycleCount is the number of leading entries with lifecycle changes.
func (r *Report) lifecycleCount() int {
	n := 0
	for n < len(r.Entries) && len(r.Entries[n].Lifecycle) > 0 {
		n++
	}
	return n
}

// WriteJSON writes the report as one JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteMarkdown writes the report for a pull-request comment: a heading
// with the counts, a table of the objects (change, and what changed in
// waves, hooks and policies), then one collapsed section per object with
// its diff. The whole stays within limit bytes: table rows and sections
// that do not fit are counted in a closing "and N more" line, and a diff
// longer than a quarter of the limit is cut.
func (r *Report) WriteMarkdown(w io.Writer, limit int) error {
	if limit <= 0 {
		limit = DefaultMarkdownLimit
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### wavesmith review: `%s` → `%s`\n\n", r.Base, r.Head)
	if r.Empty() {
		b.WriteString("No difference in the rendered objects.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "**%d added, %d removed, %d changed**\n\n", r.Added, r.Removed, r.Changed)
	const closing = 200 // room for the closing line
	b.WriteString("| object | change | waves, hooks, policies |\n|---|---|---|\n")
	rows := 0
	for _, e := range r.Entries {
		row := fmt.Sprintf("| `%s` | %s | %s |\n", e.Object, e.Change, lifecycleText(e.Lifecycle, "→"))
		if b.Len()+len(row) > limit/2 {
			break
		}
		b.WriteString(row)
		rows++
	}
	if rows < len(r.Entries) {
		fmt.Fprintf(&b, "\nand %d more objects, not listed\n", len(r.Entries)-rows)
	}
	b.WriteString("\n")
	shown := 0
	for _, e := range r.Entries {
		diff := e.Diff
		if max := limit / 4; len(diff) > max {
			diff = diff[:max]
			if i := strings.LastIndexByte(diff, '\n'); i > 0 {
				diff = diff[:i+1]
			}
			diff += "... (diff cut; run wavesmith review for the whole)\n"
		}
		fence := fenceFor(diff)
		sec := fmt.Sprintf("<details><summary><code>%s</code> (%s)</summary>\n\n%sdiff\n%s%s\n\n</details>\n\n", e.Object, e.Change, fence, diff, fence)
		if b.Len()+len(sec)+closing > limit {
			break
		}
		b.WriteString(sec)
		shown++
	}
	if shown < len(r.Entries) {
		fmt.Fprintf(&b, "and %d more objects whose diff does not fit here: run `wavesmith review` for the whole report\n", len(r.Entries)-shown)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fenceFor returns a code fence longer than any run of backticks in s.
func fenceFor(s string) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			if run > longest {
				longest = run
			}
		} else {
			run = 0
		}
	}
	if longest < 3 {
		return "```"
	}
	return strings.Repeat("`", longest+1)
}
