package rabbitmq

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// This file shapes the management API's lists as rabbit_mgmt_util does:
// columns=, sort=, sort_reverse= and paging with page=, page_size=, name=
// and use_regex=.

// listQuery is what a request asks of a list.
type listQuery struct {
	sort     string // "" for the default order
	reverse  bool
	columns  string
	page     *string
	pageSize *string
	name     *string
	useRegex bool
	paged    bool // the list takes paging parameters
}

// The bounds of paging (rabbit_mgmt_util:pagination_params).
const (
	defaultPageSize = 100
	maxPageSize     = 500
)

// listing sorts items (by q.sort, then defaultSort), pages them when asked
// and keeps the asked-for columns. The result is the list, or a paged
// reply {filtered_count, item_count, items, page, page_count, page_size,
// total_count}.
func listing(items []map[string]any, q listQuery, defaultSort []string) (any, error) {
	var pg *pagination
	if q.paged {
		var err error
		if pg, err = parsePagination(q); err != nil {
			return nil, err
		}
	}
	keys := defaultSort
	if q.sort != "" {
		keys = append([]string{q.sort}, defaultSort...)
	}
	sorted := slices.Clone(items)
	slices.SortStableFunc(sorted, func(a, b map[string]any) int {
		for _, k := range keys {
			if c := compareTerms(dottedValue(a, k), dottedValue(b, k)); c != 0 {
				return c
			}
		}
		return 0
	})
	if q.reverse {
		slices.Reverse(sorted)
	}
	cols := parseColumns(q.columns)
	if pg == nil {
		out := make([]map[string]any, len(sorted))
		for i, it := range sorted {
			out[i] = pickColumns(it, cols)
		}
		return out, nil
	}
	filtered := sorted
	if pg.name != "" {
		filtered = nil
		for _, it := range sorted {
			if pg.match(it) {
				filtered = append(filtered, it)
			}
		}
	}
	offset := (pg.page - 1) * pg.size
	if offset > int64(len(filtered)) {
		return nil, &apiError{status: http.StatusBadRequest, kind: "page_out_of_range",
			reason: fmt.Sprintf("Page out of range, page: %d page size: %d, len: %d", pg.page, pg.size, len(filtered))}
	}
	end := min(offset+pg.size, int64(len(filtered)))
	page := make([]map[string]any, 0, end-offset)
	for _, it := range filtered[offset:end] {
		page = append(page, pickColumns(it, cols))
	}
	return map[string]any{
		"total_count":    len(items),
		"item_count":     len(page),
		"filtered_count": len(filtered),
		"page":           pg.page,
		"page_size":      pg.size,
		"page_count":     (int64(len(filtered)) + pg.size - 1) / pg.size,
		"items":          page,
	}, nil
}

// pagination is a valid paging request.
type pagination struct {
	page, size int64
	name       string
	re         *regexp.Regexp // use_regex=true
}

func (p *pagination) match(it map[string]any) bool {
	name, ok := it["name"].(string)
	if !ok {
		return false
	}
	if p.re != nil {
		return p.re.MatchString(name)
	}
	return strings.Contains(strings.ToLower(name), strings.ToLower(p.name))
}

// parsePagination reads page= and page_size= as RabbitMQ 3.10 does; nil
// when no page is asked for.
func parsePagination(q listQuery) (*pagination, error) {
	invalid := badRequest("Pagination parameters are invalid")
	num := func(s *string) (*int64, error) {
		if s == nil {
			return nil, nil
		}
		n, err := strconv.ParseInt(*s, 10, 64)
		if err != nil {
			return nil, invalid
		}
		return &n, nil
	}
	page, err := num(q.page)
	if err != nil {
		return nil, err
	}
	size, err := num(q.pageSize)
	if err != nil {
		return nil, err
	}
	if page == nil {
		return nil, nil
	}
	show := func(n *int64) string {
		if n == nil {
			return "undefined"
		}
		return strconv.FormatInt(*n, 10)
	}
	if *page <= 0 || size != nil && (*size <= 0 || *size > maxPageSize) {
		return nil, &apiError{status: http.StatusBadRequest, kind: "invalid_pagination_parameters",
			reason: fmt.Sprintf("Invalid pagination parameters: page number %s, page size %s", show(page), show(size))}
	}
	pg := &pagination{page: *page, size: defaultPageSize}
	if size != nil {
		pg.size = *size
	}
	if q.name != nil {
		pg.name = *q.name
		if q.useRegex && pg.name != "" {
			re, err := regexp.Compile("(?i)" + pg.name)
			if err != nil {
				return nil, invalid
			}
			pg.re = re
		}
	}
	return pg, nil
}

// parseColumns reads columns=: a comma-separated list of (dotted) paths;
// nil for every column.
func parseColumns(s string) [][]string {
	if s == "" {
		return nil
	}
	var out [][]string
	for _, col := range strings.Split(s, ",") {
		var path []string
		for _, p := range strings.Split(col, ".") {
			if p != "" {
				path = append(path, p)
			}
		}
		if path != nil {
			out = append(out, path)
		}
	}
	if out == nil {
		return [][]string{}
	}
	return out
}

// pickColumns keeps the columns of obj that cols name, descending into
// nested objects (and lists of objects) for dotted paths.
func pickColumns(obj map[string]any, cols [][]string) map[string]any {
	if cols == nil {
		return obj
	}
	out := map[string]any{}
	for k, v := range obj {
		var sub [][]string
		wanted, whole := false, false
		for _, c := range cols {
			if c[0] != k {
				continue
			}
			wanted = true
			if len(c) == 1 {
				whole = true
			} else {
				sub = append(sub, c[1:])
			}
		}
		switch {
		case !wanted:
		case whole:
			out[k] = v
		default:
			out[k] = pickValue(v, sub)
		}
	}
	return out
}

func pickValue(v any, cols [][]string) any {
	switch x := v.(type) {
	case map[string]any:
		return pickColumns(x, cols)
	case []map[string]any:
		out := make([]map[string]any, len(x))
		for i, e := range x {
			out[i] = pickColumns(e, cols)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = pickValue(e, cols)
		}
		return out
	}
	return v
}

// dottedValue is rabbit_mgmt_util:get_dotted_value: the value at a dotted
// path, 0 when it is missing.
func dottedValue(obj map[string]any, path string) any {
	var cur any = obj
	for _, k := range strings.FieldsFunc(path, func(r rune) bool { return r == '.' }) {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0
		}
		if cur, ok = m[k]; !ok {
			return 0
		}
	}
	return cur
}

// compareTerms orders JSON values as Erlang orders the terms behind them:
// numbers < atoms (false, null, true) < objects < lists < strings.
func compareTerms(a, b any) int {
	ca, cb := termClass(a), termClass(b)
	if ca != cb {
		return cmp.Compare(ca, cb)
	}
	switch ca {
	case 0:
		x, _ := termNumber(a)
		y, _ := termNumber(b)
		return cmp.Compare(x, y)
	case 1:
		return cmp.Compare(atomName(a), atomName(b))
	case 3:
		x, y := reflect.ValueOf(a), reflect.ValueOf(b)
		for i := 0; i < x.Len() && i < y.Len(); i++ {
			if c := compareTerms(x.Index(i).Interface(), y.Index(i).Interface()); c != 0 {
				return c
			}
		}
		return cmp.Compare(x.Len(), y.Len())
	case 4:
		return strings.Compare(a.(string), b.(string))
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	if c := cmp.Compare(len(x), len(y)); c != 0 {
		return c
	}
	return strings.Compare(string(x), string(y))
}

func termClass(v any) int {
	if _, ok := termNumber(v); ok {
		return 0
	}
	switch v.(type) {
	case nil, bool:
		return 1
	case map[string]any:
		return 2
	case string:
		return 4
	}
	if reflect.ValueOf(v).Kind() == reflect.Slice {
		return 3
	}
	return 2
}

func atomName(v any) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprint(v)
}

// termNumber returns a JSON number's value.
func termNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	if n, ok := toInt64(v); ok {
		return float64(n), true
	}
	return 0, false
}
