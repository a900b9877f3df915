package rabbitmq

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"hash"
	"regexp"
	"slices"

	"github.com/lapse-emulator/lapse/internal/lockorder"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// User is a RabbitMQ user: its password (in clear, or hashed as
// definitions.json carries it), its tags and the vhosts it may use.
type User struct {
	Name string
	// Password is the password in clear; PasswordHash is used when it is
	// empty: base64 of a 4-byte salt followed by the hash of salt+password,
	// with HashingAlgorithm rabbit_password_hashing_sha256 (the default),
	// _sha512 or _md5, as rabbitmqctl export_definitions writes it.
	Password         string
	PasswordHash     string
	HashingAlgorithm string
	Tags             []string
	// Permissions maps a vhost to the user's permissions there.
	Permissions map[string]Permission
}

// Permission is a user's configure, write and read patterns in one vhost.
type Permission struct {
	Configure, Write, Read string
}

// vhostDefault is the vhost every RabbitMQ has.
const vhostDefault = "/"

// DefaultUser is RabbitMQ's guest/guest, an administrator with every
// permission on vhost "/".
func DefaultUser() User {
	return User{Name: "guest", Password: "guest", Tags: []string{"administrator"},
		Permissions: map[string]Permission{vhostDefault: {".*", ".*", ".*"}}}
}

// checkPassword reports whether password is the user's.
func (u *User) checkPassword(password string) bool {
	if password == "" {
		return false // RabbitMQ refuses blank passwords
	}
	if u.PasswordHash == "" {
		return subtle.ConstantTimeCompare([]byte(u.Password), []byte(password)) == 1
	}
	raw, err := base64.StdEncoding.DecodeString(u.PasswordHash)
	if err != nil || len(raw) < 4 {
		return false
	}
	var h hash.Hash
	switch u.HashingAlgorithm {
	case "", "rabbit_password_hashing_sha256":
		h = sha256.New()
	case "rabbit_password_hashing_sha512":
		h = sha512.New()
	case "rabbit_password_hashing_md5":
		h = md5.New()
	default:
		return false
	}
	h.Write(raw[:4])
	h.Write([]byte(password))
	return subtle.ConstantTimeCompare(h.Sum(nil), raw[4:]) == 1
}

// HashPassword returns the rabbit_password_hashing_sha256 hash of password
// with the given 4-byte salt, as definitions.json carries it.
func HashPassword(salt [4]byte, password string) string {
	sum := sha256.Sum256(append(salt[:], password...))
	return base64.StdEncoding.EncodeToString(append(salt[:], sum[:]...))
}

// isAdmin reports whether the user has the administrator tag.
func (u *User) isAdmin() bool { return slices.Contains(u.Tags, "administrator") }

func (s *Server) putUser(u User) {
	s.mu.Lock()
	cp := u
	s.users[u.Name] = &cp
	s.mu.Unlock()
}

// Authenticates reports whether name and password log in to s, for a
// world's Config.UserElsewhere.
func (s *Server) Authenticates(name, password string) bool {
	return s.authenticate(name, password) != nil
}

// authenticate checks a login; nil when refused.
func (s *Server) authenticate(name, password string) *User {
	s.mu.RLock()
	defer s.mu.RUnlock()
	u := s.users[name]
	if u == nil || !u.checkPassword(password) {
		return nil
	}
	cp := *u
	return &cp
}

// parsePlain reads a SASL PLAIN response: authzid NUL authcid NUL password.
func parsePlain(resp []byte) (user, pass string, ok bool) {
	parts := bytes.Split(resp, []byte{0})
	if len(parts) != 3 {
		return "", "", false
	}
	return string(parts[1]), string(parts[2]), true
}

// What a permission check asks for (rabbit_access_control).
type access uint8

const (
	configure access = iota
	write
	read
)

// permitted checks the connection's user may configure, write or read the
// named resource ("queue" or "exchange") of its vhost, as RabbitMQ checks
// a user's permission patterns; a refusal is 403 ACCESS_REFUSED.
func (c *conn) permitted(what access, kind, name string) error {
	p := c.user.Permissions[c.vhost]
	pattern := [...]string{p.Configure, p.Write, p.Read}[what]
	if pattern == ".*" {
		return nil
	}
	if pattern != "" {
		if re, err := c.s.patterns.get(pattern); err == nil && re.MatchString(name) {
			return nil
		}
	}
	return channelError(wire.AccessRefused, "access to %s refused for user '%s'", rs(kind, name, c.vhost), c.user.Name)
}

// patternCache compiles permission patterns once. Like RabbitMQ's, they
// are not anchored: ".*" and "^app\." are written as they match.
type patternCache struct {
	mu lockorder.Mutex
	m  map[string]*regexp.Regexp
}

func (pc *patternCache) get(p string) (*regexp.Regexp, error) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if re, ok := pc.m[p]; ok {
		return re, nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	if pc.m == nil {
		pc.m = map[string]*regexp.Regexp{}
	}
	pc.m[p] = re
	return re, nil
}

// bindPermitted is a binding's check: write on the destination, read on
// the source exchange.
func (c *conn) bindPermitted(destKind, dest, source string) error {
	if err := c.permitted(write, destKind, dest); err != nil {
		return err
	}
	return c.permitted(read, "exchange", source)
}
