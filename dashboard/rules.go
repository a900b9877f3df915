package dashboard

import (
	"bufio"
	"html/template"
	"regexp"
	"strings"
)

// Rule is one expiry rule of docs/rules.md (docs.Rules), which the
// dashboard links every rule ID to.
type Rule struct {
	ID string
	// Section is the heading the rule stands under ("Service Bus (AMQP
	// 1.0, ...)").
	Section string
	// Text is the rule, with `code` spans as <code>.
	Text template.HTML
}

// ruleRow matches a rule row of docs/rules.md's tables: | SB-1 | text |.
var ruleRow = regexp.MustCompile(`^\|\s*([A-Z]{2}-\d+)\s*\|\s*(.*?)\s*\|\s*$`)

// seedRefs are references of a heading to source documents outside the
// repository ("..., seeds/x.md"), which the dashboard does not serve.
var seedRefs = regexp.MustCompile(`,\s*seeds/[^)]*`)

// parseRules reads the rule tables of docs/rules.md, in document order.
func parseRules(md string) []Rule {
	var out []Rule
	section := ""
	sc := bufio.NewScanner(strings.NewReader(md))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if h, ok := strings.CutPrefix(line, "## "); ok {
			section = seedRefs.ReplaceAllString(h, "")
			continue
		}
		if m := ruleRow.FindStringSubmatch(line); m != nil {
			out = append(out, Rule{ID: m[1], Section: section, Text: codeSpans(m[2])})
		}
	}
	return out
}

// codeSpans escapes s as HTML and turns its `code` spans into <code>
// elements, the only markdown the rule texts need.
func codeSpans(s string) template.HTML {
	parts := strings.Split(s, "`")
	var b strings.Builder
	for i, p := range parts {
		p = template.HTMLEscapeString(p)
		if i%2 == 1 && i < len(parts)-1 {
			b.WriteString("<code>" + p + "</code>")
			continue
		}
		if i%2 == 1 {
			b.WriteString("`") // an unpaired backtick stays as it is
		}
		b.WriteString(p)
	}
	return template.HTML(b.String())
}
