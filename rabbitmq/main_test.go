package rabbitmq_test

import (
	"testing"

	"github.com/gin-gonic/gin"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// gin decides its mode at init and would print every route.
	gin.SetMode(gin.TestMode)
	goleak.VerifyTestMain(m)
}
