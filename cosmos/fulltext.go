package cosmos

import (
	"github.com/lapse-emulator/lapse/cosmos/query"
)

// fullTextLanguages reads a container resource's fullTextPolicy, kept as
// the client sent it: {"defaultLanguage": "en-US", "fullTextPaths":
// [{"path": "/text", "language": "en-US"}]}, or the first preview's bare
// array of paths. It returns each path's language and the default one.
func fullTextLanguages(resource []byte) (map[string]string, string) {
	v, err := query.Decode(resource)
	if err != nil {
		return nil, ""
	}
	o, _ := v.(*query.Object)
	if o == nil {
		return nil, ""
	}
	p, ok := o.Get("fullTextPolicy")
	if !ok {
		return nil, ""
	}
	var paths any = p
	def := ""
	if po, ok := p.(*query.Object); ok {
		def, _ = getString(po, "defaultLanguage")
		paths, _ = po.Get("fullTextPaths")
	}
	langs := map[string]string{}
	list, _ := paths.([]any)
	for _, el := range list {
		eo, ok := el.(*query.Object)
		if !ok {
			continue
		}
		path, ok1 := getString(eo, "path")
		lang, ok2 := getString(eo, "language")
		if ok1 && ok2 {
			langs[path] = lang
		}
	}
	return langs, def
}

// queryOptions are the options of a query over container ct's documents
// (nil for a feed of databases, containers or offers): the clock, the
// container's full-text languages, and, for FullTextScore, every item of
// the container as the corpus its statistics come from.
func (s *Server) queryOptions(ct *container, q *query.Query) (query.Options, error) {
	opts := query.Options{Now: s.now()}
	if ct == nil {
		return opts, nil
	}
	opts.Languages, opts.DefaultLanguage = fullTextLanguages(ct.meta.Resource)
	opts.UDF = s.udfResolver(ct)
	if !q.NeedsCorpus() {
		return opts, nil
	}
	all, _, err := s.collect(ct, scope{all: true}, 0)
	if err != nil {
		return opts, err
	}
	opts.Corpus = func(yield func(any) bool) {
		for _, d := range all {
			v, err := query.Decode(d)
			if err != nil {
				continue
			}
			if !yield(v) {
				return
			}
		}
	}
	return opts, nil
}
