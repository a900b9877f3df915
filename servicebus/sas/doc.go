// Package sas reads and writes the Shared Access Signature tokens Service
// Bus clients present: in the Authorization header of the ATOM management
// API and in the CBS put-token of the AMQP front-end.
//
// A token is
//
//	SharedAccessSignature sr=<resource>&sig=<signature>&se=<expiry>&skn=<key name>
//
// where resource is the URL-encoded resource URI (the Go SDK lowercases the
// encoded text), expiry is in Unix seconds, and signature is the URL-encoded
// base64 HMAC-SHA256, keyed with the key's value, of resource and expiry as
// they appear in the token, joined by a newline. The signature covers the
// encoded resource text exactly as sent, so Verify never re-encodes it.
package sas
