package rabbitmq

import (
	"io"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
)

// This file is the management API's definitions (rabbit_mgmt_wm_definitions).

// GET /api/definitions[/{vhost}][?download=file]
func (m *Management) getDefinitions(c *gin.Context) {
	vh, has := m.pathVhost(c)
	if has && m.s.lookupVhost(vh) == nil {
		m.writeError(c, badRequest("vhost_not_found"))
		return
	}
	d, err := m.s.Definitions(vh)
	if err != nil {
		m.writeError(c, err)
		return
	}
	if name := c.Query("download"); name != "" {
		c.Header("Content-Disposition", "attachment; filename="+name)
	}
	m.writeJSON(c, http.StatusOK, d)
}

// POST /api/definitions[/{vhost}]: merges the body into the server
// (Server.LoadDefinitions); 204. A vhost the import creates gives the
// user who posted it every permission on it. lapse answers once the
// import is done, never with RabbitMQ's 102 Processing.
func (m *Management) postDefinitions(c *gin.Context) {
	vh, has := m.pathVhost(c)
	raw, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, maxBody))
	if err != nil {
		m.writeError(c, badRequest("Exceeded HTTP request body size limit"))
		return
	}
	defs, err := decodeObject(raw)
	if err != nil {
		m.writeError(c, badRequest("failed_to_parse_json"))
		return
	}
	if has && m.s.lookupVhost(vh) == nil {
		m.writeError(c, errVhostNotFound)
		return
	}
	if err := m.s.importDefinitions(defs, vh, m.user(c).Name); err != nil {
		if core.ErrorCode(err) == core.EINVALID {
			err = badRequest(core.ErrorMessage(err))
		}
		m.writeError(c, err)
		return
	}
	noContent(c)
}
