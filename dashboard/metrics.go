package dashboard

import "github.com/gin-gonic/gin"

// metricsRoutes serves GET /metrics.
func (s *Server) metricsRoutes(r *gin.Engine) {}
