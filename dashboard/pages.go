package dashboard

import "github.com/gin-gonic/gin"

// pageRoutes serves the web UI.
func (s *Server) pageRoutes(r *gin.Engine) {}
