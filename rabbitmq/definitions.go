package rabbitmq

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// Definitions is a definitions.json document, as `rabbitmqctl
// export_definitions` and GET /api/definitions write it (RabbitMQ 3.10).
// The export of one vhost has no users, vhosts, permissions, topic or
// global parameters and no product fields: those are nil, and left out.
type Definitions struct {
	RabbitVersion    string                 `json:"rabbit_version"`
	RabbitMQVersion  string                 `json:"rabbitmq_version,omitempty"`
	ProductName      string                 `json:"product_name,omitempty"`
	ProductVersion   string                 `json:"product_version,omitempty"`
	Users            []DefinitionUser       `json:"users,omitzero"`
	Vhosts           []DefinitionVhost      `json:"vhosts,omitzero"`
	Permissions      []DefinitionPermission `json:"permissions,omitzero"`
	TopicPermissions []any                  `json:"topic_permissions,omitzero"`
	Parameters       []DefinitionParameter  `json:"parameters"`
	GlobalParameters []any                  `json:"global_parameters,omitzero"`
	Policies         []DefinitionPolicy     `json:"policies"`
	Queues           []DefinitionQueue      `json:"queues"`
	Exchanges        []DefinitionExchange   `json:"exchanges"`
	Bindings         []DefinitionBinding    `json:"bindings"`
}

// DefinitionUser is a user of a definitions document.
type DefinitionUser struct {
	Name             string         `json:"name"`
	PasswordHash     string         `json:"password_hash"`
	HashingAlgorithm string         `json:"hashing_algorithm"`
	Tags             []string       `json:"tags"`
	Limits           map[string]any `json:"limits"`
}

// DefinitionVhost is a vhost of a definitions document.
type DefinitionVhost struct {
	Name string `json:"name"`
}

// DefinitionPermission is a user's permissions on a vhost.
type DefinitionPermission struct {
	User      string `json:"user"`
	Vhost     string `json:"vhost"`
	Configure string `json:"configure"`
	Write     string `json:"write"`
	Read      string `json:"read"`
}

// DefinitionParameter is a runtime parameter: lapse has those of
// component "operator_policy", whose value is {pattern, definition,
// priority, apply-to}.
type DefinitionParameter struct {
	Value     map[string]any `json:"value"`
	Vhost     string         `json:"vhost"`
	Component string         `json:"component"`
	Name      string         `json:"name"`
}

// DefinitionPolicy is a policy.
type DefinitionPolicy struct {
	Vhost      string         `json:"vhost"`
	Name       string         `json:"name"`
	Pattern    string         `json:"pattern"`
	ApplyTo    string         `json:"apply-to"`
	Definition map[string]any `json:"definition"`
	Priority   int            `json:"priority"`
}

// DefinitionQueue is a queue; Vhost is empty in the export of one vhost.
type DefinitionQueue struct {
	Name       string         `json:"name"`
	Vhost      string         `json:"vhost,omitempty"`
	Durable    bool           `json:"durable"`
	AutoDelete bool           `json:"auto_delete"`
	Arguments  map[string]any `json:"arguments"`
}

// DefinitionExchange is an exchange; Vhost is empty in the export of one
// vhost.
type DefinitionExchange struct {
	Name       string         `json:"name"`
	Vhost      string         `json:"vhost,omitempty"`
	Type       string         `json:"type"`
	Durable    bool           `json:"durable"`
	AutoDelete bool           `json:"auto_delete"`
	Internal   bool           `json:"internal"`
	Arguments  map[string]any `json:"arguments"`
}

// DefinitionBinding is a binding; Vhost is empty in the export of one
// vhost.
type DefinitionBinding struct {
	Source          string         `json:"source"`
	Vhost           string         `json:"vhost,omitempty"`
	Destination     string         `json:"destination"`
	DestinationType string         `json:"destination_type"`
	RoutingKey      string         `json:"routing_key"`
	Arguments       map[string]any `json:"arguments"`
}

// Definitions returns the current definitions in RabbitMQ's shape: of
// vhost vh, or of everything (with users, vhosts and permissions) when vh
// is "". As RabbitMQ's export, it leaves out exclusive queues, the default
// and amq.* exchanges and the bindings of the default exchange. ENOTFOUND
// when vh does not exist.
func (s *Server) Definitions(vh string) (*Definitions, error) {
	d := &Definitions{RabbitVersion: rabbitVersion, Parameters: []DefinitionParameter{},
		Policies: []DefinitionPolicy{}, Queues: []DefinitionQueue{}, Exchanges: []DefinitionExchange{},
		Bindings: []DefinitionBinding{}}
	vhosts := s.vhostNames()
	if vh != "" {
		if !slices.Contains(vhosts, vh) {
			return nil, core.Errorf(core.ENOTFOUND, "vhost %q not found", vh)
		}
		vhosts = []string{vh}
	} else {
		d.RabbitMQVersion, d.ProductName, d.ProductVersion = rabbitVersion, "RabbitMQ", rabbitVersion
		d.Users, d.Vhosts, d.Permissions = []DefinitionUser{}, []DefinitionVhost{}, []DefinitionPermission{}
		d.TopicPermissions, d.GlobalParameters = []any{}, []any{}
		for _, u := range s.usersCopy() {
			hash, alg := u.exportHash()
			tags := u.Tags
			if tags == nil {
				tags = []string{}
			}
			d.Users = append(d.Users, DefinitionUser{Name: u.Name, PasswordHash: hash, HashingAlgorithm: alg,
				Tags: tags, Limits: map[string]any{}})
			for _, v := range sortedKeys(u.Permissions) {
				p := u.Permissions[v]
				d.Permissions = append(d.Permissions, DefinitionPermission{User: u.Name, Vhost: v,
					Configure: p.Configure, Write: p.Write, Read: p.Read})
			}
		}
		for _, v := range vhosts {
			d.Vhosts = append(d.Vhosts, DefinitionVhost{Name: v})
		}
	}
	// Only the export of everything names the vhost of queues, exchanges
	// and bindings.
	tag := func(v string) string {
		if vh != "" {
			return ""
		}
		return v
	}
	for _, v := range vhosts {
		for _, p := range s.Policies(v, true) {
			d.Parameters = append(d.Parameters, DefinitionParameter{Vhost: v, Component: "operator_policy",
				Name: p.Name, Value: map[string]any{"pattern": p.Pattern, "definition": nonNilMap(p.Definition),
					"priority": p.Priority, "apply-to": applyTo(p.ApplyTo)}})
		}
		// RabbitMQ lists policies by priority, lowest first.
		pols := s.Policies(v, false)
		slices.SortStableFunc(pols, func(a, b adapters.RabbitPolicy) int { return cmp.Compare(a.Priority, b.Priority) })
		for _, p := range pols {
			d.Policies = append(d.Policies, DefinitionPolicy{Vhost: v, Name: p.Name, Pattern: p.Pattern,
				ApplyTo: applyTo(p.ApplyTo), Definition: nonNilMap(p.Definition), Priority: p.Priority})
		}
		exported := map[string]bool{}
		for _, q := range s.queuesIn(v) {
			if q.exclusive {
				continue
			}
			exported[q.name] = true
			d.Queues = append(d.Queues, DefinitionQueue{Name: q.name, Vhost: tag(v), Durable: q.durable,
				AutoDelete: q.autoDelete, Arguments: tableJSON(q.args)})
		}
		for _, x := range s.exchangesIn(v) {
			if x.name == "" || strings.HasPrefix(x.name, "amq.") {
				continue
			}
			d.Exchanges = append(d.Exchanges, DefinitionExchange{Name: x.name, Vhost: tag(v), Type: x.kind,
				Durable: x.durable, AutoDelete: x.autoDelete, Internal: x.intern, Arguments: tableJSON(x.args)})
		}
		for _, b := range s.bindingsIn(v) {
			if b.source == "" || b.destType == "queue" && !exported[b.dest] || b.destType == "exchange" && b.dest == "" {
				continue
			}
			d.Bindings = append(d.Bindings, DefinitionBinding{Source: b.source, Vhost: tag(v), Destination: b.dest,
				DestinationType: b.destType, RoutingKey: b.key, Arguments: tableJSON(b.args)})
		}
	}
	return d, nil
}

func nonNilMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// LoadDefinitions merges a definitions.json (as `rabbitmqctl
// export_definitions` or GET /api/definitions write it) into the server,
// as RabbitMQ's import does, in its order: users, vhosts, permissions,
// exchanges, policies, parameters (operator policies: component
// "operator_policy"), queues, bindings. A user has a password_hash (with
// its hashing_algorithm, sha256 by default) or, as a lapse convenience, a
// "password" in clear. Queues and exchanges that exist are kept as they
// are, and bindings that exist stay (RabbitMQ's import semantics); queues
// and exchanges named amq.* are skipped. Other runtime parameters
// (shovels, federation), global parameters and topic permissions are
// skipped with a warning: lapse has none of them. The first error stops
// the import; what came before it stays. Users are kept in memory only.
func (s *Server) LoadDefinitions(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return core.Errorf(core.EINVALID, "reading definitions: %v", err)
	}
	defs, err := decodeObject(raw)
	if err != nil {
		return core.Errorf(core.EINVALID, "the definitions are not a JSON object")
	}
	if own := s.Vhost(); own != vhostDefault {
		ownVhost(defs, own)
	}
	return s.importDefinitions(defs, "", "")
}

// ownVhost makes the default vhost "/" of definitions stand for own, a
// broker's vhost that is not "/" (a sandbox's, issue 29): the definitions
// a test gives the default world declare the same in a sandbox.
func ownVhost(defs map[string]any, own string) {
	for category, v := range defs {
		list, _ := v.([]any)
		for _, item := range list {
			entry, ok := item.(map[string]any)
			if !ok {
				continue
			}
			field := "vhost"
			if category == "vhosts" {
				field = "name"
			}
			if entry[field] == vhostDefault {
				entry[field] = own
			}
		}
	}
}

// importDefinitions merges decoded definitions: into vhost vh only (its
// exchanges, parameters, policies, queues and bindings, whatever vhost
// they name) when vh is not "". A vhost it creates gives actingUser (if
// any) every permission on it.
func (s *Server) importDefinitions(defs map[string]any, vh, actingUser string) error {
	type step struct {
		category string
		fn       func(entry map[string]any, vh string) error
	}
	all := []step{
		{"users", s.importUser},
		{"vhosts", func(e map[string]any, _ string) error {
			name, _ := e["name"].(string)
			_, err := s.putVhost(name, actingUser)
			return err
		}},
		{"permissions", s.importPermission},
		{"exchanges", s.importExchange},
		{"policies", s.importPolicy},
		{"parameters", s.importParameter},
		{"queues", s.importQueue},
		{"bindings", s.importBinding},
	}
	if vh != "" {
		all = []step{all[3], all[5], all[4], all[6], all[7]}
	}
	if l, _ := defs["topic_permissions"].([]any); len(l) > 0 && vh == "" {
		s.log().Warn("definitions: topic permissions skipped: lapse has none", "count", len(l))
	}
	for _, st := range all {
		list, _ := defs[st.category].([]any)
		for _, item := range list {
			entry, ok := item.(map[string]any)
			if !ok {
				continue
			}
			target := vh
			if target == "" {
				target, _ = entry["vhost"].(string)
			}
			if err := st.fn(entry, target); err != nil {
				return importError(err)
			}
		}
	}
	return nil
}

// importError turns an error of the API's shape into a core.Error.
func importError(err error) error {
	var ae *apiError
	if errors.As(err, &ae) {
		if s, ok := ae.reason.(string); ok {
			return core.Errorf(core.EINVALID, "%s", s)
		}
		return core.Errorf(core.EINVALID, "%v", ae.reason)
	}
	return err
}

// checkImportVhost fails as RabbitMQ does for definitions that name a
// vhost that does not exist.
func (s *Server) checkImportVhost(vh string) error {
	if vh == "" {
		return core.Errorf(core.EINVALID, "Virtual host does not exist and is not specified in definitions file.")
	}
	if s.lookupVhost(vh) == nil {
		return core.Errorf(core.EINVALID, "Please create virtual host \"%s\" prior to importing definitions.", vh)
	}
	return nil
}

func (s *Server) importUser(e map[string]any, _ string) error {
	name, _ := e["name"].(string)
	if name == "" {
		return core.Errorf(core.EINVALID, "a user without a name")
	}
	_, err := s.putUserJSON(name, e)
	return err
}

func (s *Server) importPermission(e map[string]any, vh string) error {
	user, _ := e["user"].(string)
	if _, ok := s.userCopy(user); !ok {
		return core.Errorf(core.EINVALID, "{no_such_user,<<%q>>}", user)
	}
	if err := s.checkImportVhost(vh); err != nil {
		return err
	}
	p, err := permissionFromJSON(e)
	if err != nil {
		return err
	}
	s.setPermission(user, vh, p)
	return nil
}

func (s *Server) importExchange(e map[string]any, vh string) error {
	name, _ := e["name"].(string)
	if name == "" || strings.HasPrefix(name, "amq.") {
		return nil
	}
	if err := s.checkImportVhost(vh); err != nil {
		return err
	}
	if s.lookupExchange(vh, name) != nil {
		return nil
	}
	decl := &wire.ExchangeDeclare{Exchange: name}
	decl.Type, _ = e["type"].(string)
	var err error
	if decl.Durable, err = bodyBool(e, "durable"); err == nil {
		if decl.AutoDelete, err = bodyBool(e, "auto_delete"); err == nil {
			if decl.Internal, err = bodyBool(e, "internal"); err == nil {
				decl.Arguments, err = jsonToTable(e["arguments"])
			}
		}
	}
	if err == nil {
		err = s.exchangeDeclare(vh, decl)
	}
	return s.definitionError(err, rs("exchange", name, vh))
}

// definitionError says which object of the definitions failed.
func (s *Server) definitionError(err error, what string) error {
	if err == nil {
		return nil
	}
	var ae *amqpError
	if errors.As(err, &ae) {
		// rabbit_definitions:format of an #amqp_error{}: "name: explanation".
		name := wire.ReplyName(ae.code)
		return core.Errorf(core.EINVALID, "%s: %s", strings.ToLower(name), strings.TrimPrefix(ae.text, name+" - "))
	}
	if e := importError(err); core.ErrorCode(e) != core.EINTERNAL {
		return core.Errorf(core.EINVALID, "%s: %s", what, core.ErrorMessage(e))
	}
	return err
}

func (s *Server) importPolicy(e map[string]any, vh string) error {
	return s.importPolicyValue(e, vh, e["name"], false)
}

func (s *Server) importParameter(e map[string]any, vh string) error {
	comp, _ := e["component"].(string)
	if comp != "operator_policy" {
		s.log().Warn("definitions: runtime parameter skipped: lapse has no such component",
			"component", comp, "vhost", vh, "name", e["name"])
		return nil
	}
	value, _ := e["value"].(map[string]any)
	return s.importPolicyValue(value, vh, e["name"], true)
}

// importPolicyValue puts a policy: errors get RabbitMQ's " (vhost/name)".
func (s *Server) importPolicyValue(body map[string]any, vh string, nameV any, op bool) error {
	name, _ := nameV.(string)
	if name == "" {
		return core.Errorf(core.EINVALID, "policy in virtual host '%s' has undefined name", vh)
	}
	if err := s.checkImportVhost(vh); err != nil {
		return err
	}
	if body == nil {
		body = map[string]any{}
	}
	p, err := policyFromJSON(vh, name, body)
	if err == nil {
		err = s.PutPolicy(vh, p, op)
	}
	if err != nil {
		return core.Errorf(core.EINVALID, "%s (%s/%s)", escapeHTMLTags(core.ErrorMessage(err)), vh, name)
	}
	return nil
}

func (s *Server) importQueue(e map[string]any, vh string) error {
	name, _ := e["name"].(string)
	if name == "" || strings.HasPrefix(name, "amq.") {
		return nil
	}
	if err := s.checkImportVhost(vh); err != nil {
		return err
	}
	if s.findQueue(vh, name) != nil {
		return nil
	}
	decl := &wire.QueueDeclare{Queue: name}
	var err error
	if decl.Durable, err = bodyBool(e, "durable"); err == nil {
		if decl.AutoDelete, err = bodyBool(e, "auto_delete"); err == nil {
			decl.Arguments, err = jsonToTable(e["arguments"])
		}
	}
	if err == nil {
		_, _, _, err = s.queueDeclare(nil, vh, decl)
	}
	return s.definitionError(err, rs("queue", name, vh))
}

func (s *Server) importBinding(e map[string]any, vh string) error {
	src, _ := e["source"].(string)
	dst, _ := e["destination"].(string)
	dtype, _ := e["destination_type"].(string)
	key, _ := e["routing_key"].(string)
	if err := s.checkImportVhost(vh); err != nil {
		return err
	}
	toExchange := dtype == "exchange"
	missing := src == "" || s.lookupExchange(vh, src) == nil ||
		toExchange && (dst == "" || s.lookupExchange(vh, dst) == nil) ||
		!toExchange && s.findQueue(vh, dst) == nil
	if missing || dtype != "queue" && dtype != "exchange" {
		// RabbitMQ's import ignores a binding whose ends are missing.
		s.log().Warn("definitions: binding skipped: source or destination missing", "vhost", vh,
			"source", src, "destination", dst, "destination_type", dtype)
		return nil
	}
	args, err := jsonToTable(e["arguments"])
	if err == nil {
		err = s.bind(nil, vh, src, dst, toExchange, key, args, false)
	}
	return s.definitionError(err, fmt.Sprintf("binding of %s to %s", rs("exchange", src, vh), dst))
}
