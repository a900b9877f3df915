package dashboard

import "github.com/gin-gonic/gin"

// itemRoutes serves the item actions: resubmit, purge and queries.
func (s *Server) itemRoutes(api *gin.RouterGroup) {}
