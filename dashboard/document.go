package dashboard

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// document is a JSON item (a Cosmos DB document) as its entity's page shows
// it: its own properties pretty-printed, whole lines only, and the system
// properties the service adds (isCosmosSystem) apart, each whole.
type document struct {
	// ID is the document's id.
	ID string
	// Text is the document without its system properties, indented.
	Text string
	// System are the system properties, in the document's order, strings
	// unquoted; _ts has its time beside it.
	System []core.Setting
	// MoreLines counts the lines of Text left out past docLines.
	MoreLines int
}

// docLines and docMaxBytes bound what an entity's page shows of a
// document: its first docLines lines; a body larger than docMaxBytes is
// not laid out at all (the items call returns it whole).
const (
	docLines    = 40
	docMaxBytes = 64 << 10
)

// parseDocument lays out a JSON object body; nil when the body is not one
// or is too large to lay out.
func parseDocument(body []byte) *document {
	if len(body) > docMaxBytes {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	d := &document{}
	var own bytes.Buffer
	own.WriteString("{")
	n := 0
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		key, ok := t.(string)
		if !ok {
			return nil
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil
		}
		if isCosmosSystem(key) {
			d.System = append(d.System, core.Setting{Key: key, Value: systemValue(key, raw)})
			continue
		}
		if key == "id" {
			json.Unmarshal(raw, &d.ID)
		}
		if n > 0 {
			own.WriteString(",")
		}
		n++
		k, _ := json.Marshal(key)
		own.WriteString("\n  ")
		own.Write(k)
		own.WriteString(": ")
		if err := json.Indent(&own, raw, "  ", "  "); err != nil {
			return nil
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil
	}
	if n > 0 {
		own.WriteString("\n")
	}
	own.WriteString("}")
	d.Text = own.String()
	if lines := strings.Split(d.Text, "\n"); len(lines) > docLines {
		d.Text = strings.Join(lines[:docLines], "\n")
		d.MoreLines = len(lines) - docLines
	}
	return d
}

// isCosmosSystem reports whether key is one of the properties Cosmos DB
// adds to every item.
func isCosmosSystem(key string) bool {
	switch key {
	case "_rid", "_self", "_etag", "_attachments", "_ts":
		return true
	}
	return false
}

// systemValue writes a system property for people: a string unquoted, _ts
// with its time in UTC.
func systemValue(key string, raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	v := string(raw)
	if key == "_ts" {
		if sec, err := strconv.ParseInt(v, 10, 64); err == nil {
			v += " (" + time.Unix(sec, 0).UTC().Format("2006-01-02 15:04:05") + " UTC)"
		}
	}
	return v
}
