package cosmos

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/lapse-emulator/lapse/cosmos/query"
)

// partitionKey is a partition key value: one value per path of the
// container's definition (fewer for a prefix of a hierarchical key).
// A document without the key has the "none" value, an empty object, as
// the JS SDK's PartitionKey.None sends it.
type partitionKey []any

// canon returns the key's canonical text, the group its items share in
// core: a JSON array of the values, numbers written one way.
func (pk partitionKey) canon() string {
	b := []byte{'['}
	for i, v := range pk {
		if i > 0 {
			b = append(b, ',')
		}
		if o, ok := v.(*query.Object); ok && len(o.Keys) == 0 {
			b = append(b, "{}"...)
			continue
		}
		b = query.AppendJSON(b, v)
	}
	return string(append(b, ']'))
}

// prefix returns the canonical text every group under this (partial) key
// starts with.
func (pk partitionKey) prefix() string {
	c := pk.canon()
	return c[:len(c)-1]
}

// itemKey is the core key of item id under partition key canon: unique per
// (partition key, id) as in the service. The canonical key ends with ']',
// so the pair reads back unambiguously.
func itemKey(canon, id string) string { return canon + id }

// parseKeyHeader reads x-ms-documentdb-partitionkey: a JSON array, with
// Go's \UXXXXXXXX escapes for characters outside the Basic Multilingual
// Plane (azcosmos quotes with strconv.QuoteToASCII) accepted too. present
// is false when the header is absent.
func parseKeyHeader(r *http.Request) (pk partitionKey, present bool, err error) {
	h := rqPartitionKey.ofRequest(r)
	if h == "" {
		return nil, false, nil
	}
	if s, ok := plainStringKey(h); ok {
		// Most keys: one string of printable ASCII, which needs no decoder.
		return partitionKey{s}, true, nil
	}
	v, err := query.Decode([]byte(fixBigEscapes(h)))
	if err != nil {
		return nil, true, errorf(http.StatusBadRequest, "Partition key %s is invalid.", h)
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, true, errorf(http.StatusBadRequest, "Partition key %s is invalid.", h)
	}
	return partitionKey(arr), true, nil
}

// plainStringKey returns s when h is ["s"] and s is printable ASCII with
// no quote or backslash: what query.Decode would make of it.
func plainStringKey(h string) (string, bool) {
	if len(h) < 4 || h[:2] != `["` || h[len(h)-2:] != `"]` {
		return "", false
	}
	s := h[2 : len(h)-2]
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return "", false
		}
	}
	return s, true
}

// fixBigEscapes turns \UXXXXXXXX escapes into the characters they stand for.
func fixBigEscapes(s string) string {
	if !strings.Contains(s, `\U`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			if s[i+1] == 'U' && i+10 <= len(s) {
				if n, err := strconv.ParseUint(s[i+2:i+10], 16, 32); err == nil {
					b.WriteRune(rune(n))
					i += 9
					continue
				}
			}
			b.WriteByte(s[i])
			b.WriteByte(s[i+1])
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// extract reads the partition key of doc by the container's definition.
// A container without a definition has the empty key.
func (d *pkDef) extract(doc *query.Object) partitionKey {
	if d == nil {
		return partitionKey{}
	}
	pk := make(partitionKey, len(d.split))
	for i, segs := range d.split {
		var v any = doc
		for _, seg := range segs {
			o, ok := v.(*query.Object)
			if !ok {
				v = query.Undefined
				break
			}
			if v, ok = o.Get(seg); !ok {
				v = query.Undefined
				break
			}
		}
		if v == query.Undefined {
			v = &query.Object{}
		}
		pk[i] = v
	}
	return pk
}

// index returns which component of the key the document path p (as
// query.Equalities writes paths: "/a/b", JSON pointer escapes) is, or -1.
func (d *pkDef) index(p string) int {
	if d == nil {
		return -1
	}
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	for i, segs := range d.split {
		var b strings.Builder
		for _, seg := range segs {
			b.WriteByte('/')
			b.WriteString(esc.Replace(seg))
		}
		if b.String() == p {
			return i
		}
	}
	return -1
}

// paths returns the number of components a full key has.
func (d *pkDef) paths() int {
	if d == nil {
		return 0
	}
	return len(d.Paths)
}

// errKeyMismatch is the service's answer to a document whose partition key
// is not the one in the header.
func errKeyMismatch() *apiError {
	e := errorf(http.StatusBadRequest, "PartitionKey extracted from document doesn't match the one specified in the header. Learn more: https://aka.ms/CosmosDB/sql/errors/wrong-pk-value")
	e.substatus = 1001
	return e
}

// errKeyComponents is the service's answer to a point operation whose key
// has the wrong number of components.
func errKeyComponents() *apiError {
	e := errorf(http.StatusBadRequest, "Partition key provided either doesn't correspond to definition in the collection or doesn't match partition key field values specified in the document.")
	e.substatus = 1001
	return e
}
