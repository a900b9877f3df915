package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
)

// loadConfigFile reads the file of --flagName at path and hands it to load,
// the protocol front-end's loader. JSON that is cut off or malformed is
// refused before load sees it, with the place where it stops:
// "x.json:12:3: unexpected end of JSON input". With jsonc, comments and
// commas before a closing bracket are allowed, as the official Service Bus
// emulator allows them in its Config.json. A file of only white space is
// left for load to judge.
func loadConfigFile(flagName, path string, jsonc bool, load func([]byte) error) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--%s: %w", flagName, err)
	}
	if err := checkJSON(b, jsonc); err != nil {
		return fmt.Errorf("%s:%w", path, err)
	}
	if err := load(b); err != nil {
		return fmt.Errorf("--%s %s: %w", flagName, path, err)
	}
	return nil
}

// jsonError is a JSON syntax error at a line and column (from 1; the
// column counts characters).
type jsonError struct {
	line, col int
	msg       string
}

func (e *jsonError) Error() string { return fmt.Sprintf("%d:%d: %s", e.line, e.col, e.msg) }

// checkJSON returns a *jsonError when data is not one JSON value (JSONC
// with jsonc); nil for valid JSON and for data of only white space.
func checkJSON(data []byte, jsonc bool) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	plain := data
	if jsonc {
		var err error
		if plain, err = blankJSONC(data); err != nil {
			return err
		}
	}
	var v json.RawMessage
	err := json.Unmarshal(plain, &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return nil // a valid value: RawMessage takes any
	}
	// Offset counts the bytes read, the offending one included; at the end
	// of the input the place is just after the last thing that is not
	// white space, where the text stops.
	at := int(se.Offset) - 1
	if strings.HasPrefix(se.Error(), "unexpected end") {
		at = len(bytes.TrimRight(plain, " \t\r\n"))
	}
	return positionError(data, at, se.Error())
}

// positionError is a *jsonError for the byte at offset at of data.
func positionError(data []byte, at int, msg string) *jsonError {
	at = min(at, len(data))
	before := data[:at]
	line := bytes.Count(before, []byte("\n")) + 1
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return &jsonError{line: line, col: utf8.RuneCount(before[lineStart:]) + 1, msg: msg}
}

// blankJSONC returns data with its comments and the commas before a
// closing bracket turned into spaces (line ends kept), so that offsets in
// the result are offsets in data. A comment left open is an error.
func blankJSONC(data []byte) ([]byte, error) {
	out := bytes.Clone(data)
	lastComma := -1 // the last comma outside strings and comments, until something follows it
	for i := 0; i < len(out); i++ {
		switch c := out[i]; {
		case c == '"':
			lastComma = -1
			for i++; i < len(out) && out[i] != '"'; i++ {
				if out[i] == '\\' {
					i++
				}
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			if end < 0 {
				return nil, positionError(data, i, "comment not closed")
			}
			for j := i; j < i+2+end+2; j++ {
				if out[j] != '\n' && out[j] != '\r' {
					out[j] = ' '
				}
			}
			i += 2 + end + 1
		case c == ',':
			lastComma = i
		case c == ']' || c == '}':
			if lastComma >= 0 {
				out[lastComma] = ' '
			}
			lastComma = -1
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		default:
			lastComma = -1
		}
	}
	return out, nil
}
