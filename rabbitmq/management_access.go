package rabbitmq

import (
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"regexp"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
)

// This file is the management API's users, vhosts and permissions
// (rabbit_mgmt_wm_user, _users, _vhost, _vhosts, _permission,
// _permissions*, _whoami). Users and permissions live in memory only: they
// come from the server's configuration and definitions files at start and
// are lost on restart; vhosts are engine entities and stay.

// The hashing algorithm RabbitMQ 3.10 uses by default.
const sha256Hashing = "rabbit_password_hashing_sha256"

// noPassword is the password hash of a user without a password: no
// password logs it in (it does not decode).
const noPassword = "!"

// exportHash returns a user's password_hash and hashing_algorithm. A
// password kept in clear (the configuration's users) is hashed with a
// salt made from the user's name, so that exports are stable.
func (u *User) exportHash() (hash, algorithm string) {
	switch {
	case u.PasswordHash == noPassword:
		return "", sha256Hashing
	case u.PasswordHash != "":
		return u.PasswordHash, cmp.Or(u.HashingAlgorithm, sha256Hashing)
	case u.Password != "":
		sum := sha256.Sum256([]byte("lapse user " + u.Name))
		return HashPassword([4]byte(sum[:4]), u.Password), sha256Hashing
	}
	return "", sha256Hashing
}

// userJSON is a user as GET /api/users shows it.
func userJSON(u User) map[string]any {
	hash, alg := u.exportHash()
	tags := u.Tags
	if tags == nil {
		tags = []string{}
	}
	return map[string]any{"name": u.Name, "password_hash": hash, "hashing_algorithm": alg, "tags": tags,
		"limits": map[string]any{}}
}

// GET /api/users
func (m *Management) listUsers(c *gin.Context) {
	items := []map[string]any{}
	for _, u := range m.s.usersCopy() {
		items = append(items, userJSON(u))
	}
	m.replyList(c, items, []string{"vhost", "name"}, false)
}

// GET /api/users/{user}
func (m *Management) getUser(c *gin.Context) {
	u, ok := m.s.userCopy(m.param(c, "user"))
	if !ok {
		m.writeError(c, errObjectNotFound)
		return
	}
	m.reply(c, userJSON(u))
}

// PUT /api/users/{user} with {password | password_hash [, hashing_algorithm],
// tags}: rabbit_auth_backend_internal:put_user. Tags are a list or a
// comma-separated string; a user without a password cannot log in.
func (m *Management) putUser(c *gin.Context) {
	body, err := readBody(c)
	if err != nil {
		m.writeError(c, err)
		return
	}
	existed, err := m.s.putUserJSON(m.param(c, "user"), body)
	if err != nil {
		m.writeError(c, err)
		return
	}
	created(c, existed)
}

// putUserJSON creates or updates a user from its JSON (a PUT body or a
// definitions file's user); an existing user keeps its permissions.
func (s *Server) putUserJSON(name string, body map[string]any) (existed bool, err error) {
	tags, err := userTags(body)
	if err != nil {
		return false, err
	}
	_, hasPass := body["password"]
	_, hasHash := body["password_hash"]
	if hasPass && hasHash {
		return false, core.Errorf(core.EINVALID, "both_password_and_password_hash_are_provided")
	}
	u := User{Name: name, Tags: tags, PasswordHash: noPassword}
	switch {
	case hasPass:
		pw, _ := body["password"].(string)
		if pw != "" {
			var salt [4]byte
			rand.Read(salt[:])
			u.PasswordHash, u.HashingAlgorithm = HashPassword(salt, pw), sha256Hashing
		}
	case hasHash:
		if h, _ := body["password_hash"].(string); h != "" {
			u.PasswordHash = h
			u.HashingAlgorithm, _ = body["hashing_algorithm"].(string)
			u.HashingAlgorithm = cmp.Or(u.HashingAlgorithm, sha256Hashing)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.users[name]; old != nil {
		u.Permissions = copyUser(old).Permissions
		existed = true
	} else {
		u.Permissions = map[string]Permission{}
	}
	s.users[name] = &u
	return existed, nil
}

// userTags reads a user's tags: "tags" as a list or a comma-separated
// string, or the "administrator" flag of old exports.
func userTags(body map[string]any) ([]string, error) {
	raw, ok := body["tags"]
	if !ok {
		if _, ok := body["administrator"]; !ok {
			return nil, core.Errorf(core.EINVALID, "tags_not_present")
		}
		admin, err := bodyBool(body, "administrator")
		if err != nil {
			return nil, core.Errorf(core.EINVALID, "administrator must be true or false")
		}
		if !admin {
			return []string{}, nil
		}
		return []string{"administrator"}, nil
	}
	tags := []string{}
	switch v := raw.(type) {
	case string:
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				tags = append(tags, t)
			}
		}
	case []any:
		for _, t := range v {
			s, ok := t.(string)
			if !ok {
				return nil, core.Errorf(core.EINVALID, "tags must be strings")
			}
			tags = append(tags, strings.TrimSpace(s))
		}
	case nil:
	default:
		return nil, core.Errorf(core.EINVALID, "tags must be a list or a comma-separated string")
	}
	return tags, nil
}

// DELETE /api/users/{user}
func (m *Management) deleteUser(c *gin.Context) {
	if !m.s.deleteUser(m.param(c, "user")) {
		m.writeError(c, errObjectNotFound)
		return
	}
	noContent(c)
}

// GET /api/whoami
func (m *Management) getWhoami(c *gin.Context) {
	u := m.user(c)
	tags := u.Tags
	if tags == nil {
		tags = []string{}
	}
	m.reply(c, map[string]any{"name": u.Name, "tags": tags})
}

// vhostJSON is a vhost as GET /api/vhosts shows it: lapse keeps no
// description, tags or tracing for a vhost.
func (m *Management) vhostJSON(name string, stats bool) map[string]any {
	desc := ""
	if name == m.s.home() {
		desc = "Default virtual host"
	}
	obj := map[string]any{
		"name":               name,
		"description":        desc,
		"tags":               []string{},
		"default_queue_type": "undefined",
		"metadata":           map[string]any{"description": desc, "tags": []string{}},
		"tracing":            false,
		"cluster_state":      map[string]any{mgmtNode: "running"},
	}
	if stats {
		ready, unacked := 0, 0
		now := m.s.now()
		for _, q := range m.s.queuesIn(name) {
			if cnt, _, err := m.s.e.Counts(now, q.key); err == nil {
				ready += cnt.Active
				unacked += cnt.Locked
			}
		}
		obj["messages"] = ready + unacked
		obj["messages_ready"] = ready
		obj["messages_unacknowledged"] = unacked
		obj["messages_details"] = rate()
		obj["messages_ready_details"] = rate()
		obj["messages_unacknowledged_details"] = rate()
	}
	return obj
}

// GET /api/vhosts: the vhosts the user may see (every one for
// administrators and monitoring users).
func (m *Management) listVhosts(c *gin.Context) {
	u := m.user(c)
	stats := c.Query("disable_stats") != "true"
	items := []map[string]any{}
	for _, name := range m.s.vhostNames() {
		if u.isMonitor() || u.mayUseVhost(name) {
			items = append(items, m.vhostJSON(name, stats))
		}
	}
	m.replyList(c, items, []string{"name"}, true)
}

// GET /api/vhosts/{vhost}
func (m *Management) getVhost(c *gin.Context) {
	vh, ok := m.vhostParam(c)
	if !ok {
		m.writeError(c, errObjectNotFound)
		return
	}
	m.reply(c, m.vhostJSON(vh, c.Query("disable_stats") != "true"))
}

// PUT /api/vhosts/{vhost}: a new vhost gives the user who made it every
// permission on it, as rabbit_vhost:put_vhost does.
func (m *Management) putVhost(c *gin.Context) {
	vh, _ := m.pathVhost(c)
	body, err := readBody(c)
	if err == nil {
		_, err = bodyBool(body, "tracing")
	}
	if err != nil {
		m.writeError(c, err)
		return
	}
	existed, err := m.s.putVhost(vh, m.user(c).Name)
	if err != nil {
		m.writeError(c, err)
		return
	}
	created(c, existed)
}

// putVhost declares a vhost; a new one gives actingUser (if any) every
// permission on it.
func (s *Server) putVhost(vh, actingUser string) (existed bool, err error) {
	existed = s.lookupVhost(vh) != nil
	if _, err := s.declareVhost(vh); err != nil {
		return existed, err
	}
	if !existed && actingUser != "" {
		s.setPermission(actingUser, vh, Permission{".*", ".*", ".*"})
	}
	return existed, nil
}

// DELETE /api/vhosts/{vhost}: everything in it goes, its connections are
// closed and the permissions on it dropped.
func (m *Management) deleteVhost(c *gin.Context) {
	vh, ok := m.vhostParam(c)
	if !ok {
		m.writeError(c, errObjectNotFound)
		return
	}
	// Its connections are closed before it goes, and those that opened
	// in it meanwhile once it has gone (Server.openIn).
	closed := map[*conn]bool{}
	closeConns := func() {
		for _, cn := range m.s.openConns() {
			if cn.vhost == vh && !closed[cn] {
				closed[cn] = true
				cn.forceClose("vhost '" + vh + "' is down")
			}
		}
	}
	closeConns()
	if err := m.s.deleteVhost(vh); err != nil {
		m.writeError(c, err)
		return
	}
	closeConns()
	m.s.clearVhostPermissions(vh)
	noContent(c)
}

// permissionJSON is one user's permissions on one vhost.
func permissionJSON(user, vh string, p Permission) map[string]any {
	return map[string]any{"user": user, "vhost": vh, "configure": p.Configure, "write": p.Write, "read": p.Read}
}

// GET /api/permissions, /api/vhosts/{vhost}/permissions and
// /api/users/{user}/permissions
func (m *Management) listPermissions(c *gin.Context) {
	vh, hasVhost := m.pathVhost(c)
	if hasVhost && m.s.lookupVhost(vh) == nil {
		m.writeError(c, errObjectNotFound)
		return
	}
	user := m.param(c, "user")
	if user != "" {
		if _, ok := m.s.userCopy(user); !ok {
			m.writeError(c, errObjectNotFound)
			return
		}
	}
	items := []map[string]any{}
	for _, u := range m.s.usersCopy() {
		if user != "" && u.Name != user {
			continue
		}
		for _, v := range sortedKeys(u.Permissions) {
			if !hasVhost || v == vh {
				items = append(items, permissionJSON(u.Name, v, u.Permissions[v]))
			}
		}
	}
	m.replyList(c, items, []string{"vhost", "user"}, false)
}

// GET /api/permissions/{vhost}/{user}
func (m *Management) getPermission(c *gin.Context) {
	vh, _ := m.pathVhost(c)
	u, ok := m.s.userCopy(m.param(c, "user"))
	p, has := u.Permissions[vh]
	if !ok || !has || m.s.lookupVhost(vh) == nil {
		m.writeError(c, errObjectNotFound)
		return
	}
	m.reply(c, permissionJSON(u.Name, vh, p))
}

// PUT /api/permissions/{vhost}/{user} with {configure, write, read}
func (m *Management) putPermission(c *gin.Context) {
	vh, _ := m.pathVhost(c)
	user := m.param(c, "user")
	if _, ok := m.s.userCopy(user); !ok || m.s.lookupVhost(vh) == nil {
		m.writeError(c, badRequest("vhost_or_user_not_found"))
		return
	}
	body, err := readBody(c)
	if err == nil {
		err = requireKeys(body, "configure", "write", "read")
	}
	if err != nil {
		m.writeError(c, err)
		return
	}
	p, err := permissionFromJSON(body)
	if err != nil {
		m.writeError(c, err)
		return
	}
	created(c, !m.s.setPermission(user, vh, p))
}

// permissionFromJSON reads configure, write and read patterns, which must
// be regular expressions.
func permissionFromJSON(body map[string]any) (Permission, error) {
	var out [3]string
	for i, k := range []string{"configure", "write", "read"} {
		s, ok := body[k].(string)
		if !ok {
			return Permission{}, badRequest([]any{"not_string", k})
		}
		if _, err := regexp.Compile(s); err != nil {
			return Permission{}, badRequest([]any{"invalid_regexp", s, err.Error()})
		}
		out[i] = s
	}
	return Permission{Configure: out[0], Write: out[1], Read: out[2]}, nil
}

// DELETE /api/permissions/{vhost}/{user}
func (m *Management) deletePermission(c *gin.Context) {
	vh, _ := m.pathVhost(c)
	if !m.s.clearPermission(m.param(c, "user"), vh) {
		m.writeError(c, errObjectNotFound)
		return
	}
	noContent(c)
}

// seesUser reports whether connection and channel lists show the objects
// of user name to u (rabbit_mgmt_util:filter_user).
func (u *User) seesUser(name string) bool { return u.isMonitor() || u.Name == name }
