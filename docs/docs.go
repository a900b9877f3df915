// Package docs holds the pages of lapse's documentation that the binary
// serves too: the expiry rules, which the dashboard's rules page shows and
// links every rule ID to. The pages are read on GitHub as they are; this
// package only embeds them (Go's embed cannot reach a parent folder).
package docs

import _ "embed"

// Rules is docs/rules.md: the expiry rules by ID (SB-*, SS-*, RB-*, CO-*,
// EM-*), one table row per rule.
//
//go:embed rules.md
var Rules string
