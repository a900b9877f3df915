package cosmos

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos/query"
)

// offerFromHeaders reads the throughput a database or container is created
// with: x-ms-offer-throughput (manual, at least 400 RU/s in steps of 100)
// or x-ms-cosmos-offer-autopilot-settings (autoscale, {"maxThroughput":
// n}, at least 1000 in steps of 1000). nil when neither is sent.
func (s *Server) offerFromHeaders(c *gin.Context) (*offerState, error) {
	if h := rqOfferThroughput.of(c); h != "" {
		n, err := strconv.Atoi(h)
		if err != nil || n < 400 || n%100 != 0 {
			return nil, errorf(http.StatusBadRequest, "The offer throughput value '%s' is invalid. It must be at least 400 and a multiple of 100.", h)
		}
		return newOffer(n, 0), nil
	}
	if h := rqAutopilotSettings.of(c); h != "" {
		var as struct {
			MaxThroughput int `json:"maxThroughput"`
		}
		if err := json.Unmarshal([]byte(h), &as); err != nil || as.MaxThroughput < 1000 || as.MaxThroughput%1000 != 0 {
			return nil, errorf(http.StatusBadRequest, "The autoscale max throughput in '%s' is invalid. It must be at least 1000 and a multiple of 1000.", h)
		}
		return newOffer(as.MaxThroughput/10, as.MaxThroughput), nil
	}
	return nil, nil
}

// newOffer returns an offer of throughput RU/s (autoscaleMax > 0 for
// autoscale) with a new id.
func newOffer(throughput, autoscaleMax int) *offerState {
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	id := make([]byte, 4)
	rand.Read(id)
	for i := range id {
		id[i] = letters[int(id[i])%len(letters)]
	}
	return &offerState{ID: string(id), Throughput: throughput, AutoscaleMax: autoscaleMax}
}

// offerSettings shows an offer to people.
func offerSettings(o *offerState) []core.Setting {
	switch {
	case o == nil:
		return nil
	case o.AutoscaleMax > 0:
		return []core.Setting{{Key: "autoscaleMaxThroughput", Value: strconv.Itoa(o.AutoscaleMax)}}
	}
	return []core.Setting{{Key: "offerThroughput", Value: strconv.Itoa(o.Throughput)}}
}

// offerDoc is the offer resource of a database or container r.
func offerDoc(r *resource) []byte {
	o := r.meta.Offer
	link := "dbs/" + ridText(r.meta.RID[:4]) + "/"
	if r.en.Kind == kindContainer {
		link += "colls/" + r.rid() + "/"
	}
	content := `{"offerThroughput":` + strconv.Itoa(o.Throughput) + `,"offerIsRUPerMinuteThroughputEnabled":false`
	if o.AutoscaleMax > 0 {
		content += `,"offerAutopilotSettings":{"maxThroughput":` + strconv.Itoa(o.AutoscaleMax) + `}`
	}
	content += `}`
	etag := o.ETag
	if etag == "" {
		etag = etagOf(r.meta.Resource)
	}
	ts := o.TS
	if ts == 0 {
		ts = r.en.Created.Unix()
	}
	return []byte(`{"resource":` + jsonString(link) + `,"offerType":"Invalid","offerResourceId":` + jsonString(r.rid()) +
		`,"offerVersion":"V2","content":` + content + `,"id":` + jsonString(o.ID) + `,"_rid":` + jsonString(o.ID) +
		`,"_self":` + jsonString("offers/"+o.ID+"/") + `,"_etag":` + jsonString(etag) + `,"_ts":` + strconv.FormatInt(ts, 10) + `}`)
}

// offers returns every database and container that has an offer.
func (s *Server) offers() []*resource {
	var out []*resource
	for _, in := range s.cfg.Engine.Entities(s.now(), core.Cosmos) {
		r, err := s.lookup(in.EntityKey, in.Kind)
		if err == nil && r.meta.Offer != nil {
			out = append(out, r)
		}
	}
	return out
}

// findOffer returns the resource whose offer has id id (case-insensitive:
// rid-based links are lower-cased by the SDKs).
func (s *Server) findOffer(id string) (*resource, error) {
	for _, r := range s.offers() {
		if strings.EqualFold(r.meta.Offer.ID, id) {
			return r, nil
		}
	}
	return nil, errNotFound()
}

// postOffers answers the offers query (POST /offers).
func (s *Server) postOffers(c *gin.Context) {
	if !isQuery(c) {
		s.writeError(c, errorf(http.StatusMethodNotAllowed, "The requested verb is not supported."))
		return
	}
	var docs [][]byte
	for _, r := range s.offers() {
		docs = append(docs, offerDoc(r))
	}
	s.queryResources(c, "", "Offers", docs)
}

// listOffers answers GET /offers.
func (s *Server) listOffers(c *gin.Context) {
	var docs [][]byte
	for _, r := range s.offers() {
		docs = append(docs, offerDoc(r))
	}
	writeFeed(c, "", "Offers", docs, "")
}

// getOffer answers GET /offers/{id}.
func (s *Server) getOffer(c *gin.Context) {
	r, err := s.findOffer(param(c, "offer"))
	if err != nil {
		s.writeError(c, err)
		return
	}
	doc := offerDoc(r)
	writeResource(c, http.StatusOK, etagOf(doc), doc, false)
}

// replaceOffer answers PUT /offers/{id}: a new throughput, manual or
// autoscale.
func (s *Server) replaceOffer(c *gin.Context) {
	r, err := s.findOffer(param(c, "offer"))
	if err != nil {
		s.writeError(c, err)
		return
	}
	o, err := readObject(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if err := checkOfferLinks(r, o); err != nil {
		s.writeError(c, err)
		return
	}
	var in struct {
		Content struct {
			Throughput *int `json:"offerThroughput"`
			Autoscale  *struct {
				MaxThroughput int `json:"maxThroughput"`
			} `json:"offerAutopilotSettings"`
		} `json:"content"`
	}
	if err := json.Unmarshal(query.AppendJSON(nil, o), &in); err != nil {
		s.writeError(c, errorf(http.StatusBadRequest, "The offer content is invalid."))
		return
	}
	next := *r.meta.Offer
	switch {
	case in.Content.Autoscale != nil && in.Content.Autoscale.MaxThroughput > 0:
		if m := in.Content.Autoscale.MaxThroughput; m < 1000 || m%1000 != 0 {
			s.writeError(c, errorf(http.StatusBadRequest, "The autoscale max throughput %d is invalid. It must be at least 1000 and a multiple of 1000.", m))
			return
		}
		next.AutoscaleMax = in.Content.Autoscale.MaxThroughput
		next.Throughput = next.AutoscaleMax / 10
	case in.Content.Throughput != nil:
		if n := *in.Content.Throughput; n < 400 || n%100 != 0 {
			s.writeError(c, errorf(http.StatusBadRequest, "The offer throughput value '%d' is invalid. It must be at least 400 and a multiple of 100.", n))
			return
		}
		next.Throughput, next.AutoscaleMax = *in.Content.Throughput, 0
	default:
		s.writeError(c, errorf(http.StatusBadRequest, "The offer content is invalid."))
		return
	}
	next.ETag = s.etags.next()
	next.TS = s.now().Unix()
	m := r.meta
	m.Offer = &next
	mb, err := json.Marshal(m)
	if err != nil {
		s.writeError(c, err)
		return
	}
	_, commit, err := s.cfg.Engine.Update(s.now(), r.en.EntityKey, func(en *core.Entity) error {
		var err error
		if en.Meta, err = keepScripts(en.Meta, mb); err != nil {
			return err
		}
		var kept []core.Setting
		for _, st := range en.Settings {
			if st.Key != "offerThroughput" && st.Key != "autoscaleMaxThroughput" {
				kept = append(kept, st)
			}
		}
		en.Settings = append(kept, offerSettings(&next)...)
		return nil
	})
	if err == nil {
		err = commit.Wait(c.Request.Context())
	}
	if err != nil {
		s.writeError(c, err)
		return
	}
	// r is shared (lookup): the answer is of a copy with the new meta.
	updated := *r
	updated.meta = m
	doc := offerDoc(&updated)
	writeResource(c, http.StatusOK, next.ETag, doc, true)
}

// checkOfferLinks refuses, with the service's 400, an offer replace whose
// body does not name the offer it replaces: its id and _rid must be the
// offer's, and its resource and offerResourceId, when given, those of the
// database or container r the offer belongs to.
func checkOfferLinks(r *resource, o *query.Object) error {
	id, _ := getString(o, "id")
	rid, _ := getString(o, "_rid")
	if !strings.EqualFold(id, r.meta.Offer.ID) || !strings.EqualFold(rid, r.meta.Offer.ID) {
		return errorf(http.StatusBadRequest, "The offer's id and _rid in the request body, '%s' and '%s', are not those of the offer being replaced.", id, rid)
	}
	link := "dbs/" + ridText(r.meta.RID[:4]) + "/"
	if r.en.Kind == kindContainer {
		link += "colls/" + r.rid() + "/"
	}
	if v, ok := getString(o, "resource"); ok && strings.Trim(v, "/") != strings.Trim(link, "/") {
		return errorf(http.StatusBadRequest, "The offer's resource link '%s' is not the link of the resource the offer belongs to.", v)
	}
	if v, ok := getString(o, "offerResourceId"); ok && v != r.rid() {
		return errorf(http.StatusBadRequest, "The offer's offerResourceId '%s' is not the resource id of the resource the offer belongs to.", v)
	}
	return nil
}
