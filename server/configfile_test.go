package server

import "testing"

// issue 15.5: cut-off or malformed JSON says the line and column where it
// stops; JSONC (the Service Bus Config.json) keeps its comments and
// trailing commas, and its positions are those of the file as written.
func TestCheckJSONSaysWhereItStops(t *testing.T) {
	for _, c := range []struct {
		name  string
		data  string
		jsonc bool
		want  string // "" for no error
	}{
		{"Valid", `{"a": [1, 2]}`, false, ""},
		{"OnlyWhiteSpace", " \n\t", false, ""},
		{"CutOffAtEndOfLine", "{\n  \"a\": [\n    1,\n", false, "3:7: unexpected end of JSON input"},
		{"CutOffMidString", "{\n  \"name\": \"ord", false, "2:15: unexpected end of JSON input"},
		{"MissingComma", "{\n  \"a\": 1\n  \"b\": 2\n}", false, `3:3: invalid character '"' after object key:value pair`},
		{"TrailingCommaInPlainJSON", "[1,\n2,\n]", false, "3:1: invalid character ']' looking for beginning of value"},
		{"SecondValue", "{}\n{}", false, "2:1: invalid character '{' after top-level value"},
		{"ColumnsCountCharacters", "{\"é\": 1 x}", false, "1:9: invalid character 'x' after object key:value pair"},
		{"JSONCComments", "// c\n{\"a\": /* b */ 1, // d\n \"c\": [1,],\n}", true, ""},
		{"JSONCKeepsSlashesInStrings", `{"url": "http://x/*y*/"}`, true, ""},
		{"JSONCPositionsOfTheFile", "{\n  // comment\n  /* a\n     b */ \"a\": 1,\n  \"b\" 2\n}", true, "5:7: invalid character '2' after object key"},
		{"JSONCCutOffAfterComment", "{\n  \"a\": 1, // more\n", true, "2:10: unexpected end of JSON input"},
		{"JSONCCommentNotClosed", "{\n  \"a\": 1 /* more\n}", true, "2:10: comment not closed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ""
			if err := checkJSON([]byte(c.data), c.jsonc); err != nil {
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("checkJSON(%q): %q, want %q", c.data, got, c.want)
			}
		})
	}
}
