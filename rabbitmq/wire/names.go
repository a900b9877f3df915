package wire

import "strconv"

// MethodName returns a method's name as amqp0-9-1.xml and RabbitMQ write it,
// such as "queue.declare", or "class C, method M" for an unknown one.
func MethodName(class, method uint16) string {
	switch methodKey(class, method) {
	case methodKey(ClassConnection, 10):
		return "connection.start"
	case methodKey(ClassConnection, 11):
		return "connection.start-ok"
	case methodKey(ClassConnection, 20):
		return "connection.secure"
	case methodKey(ClassConnection, 21):
		return "connection.secure-ok"
	case methodKey(ClassConnection, 30):
		return "connection.tune"
	case methodKey(ClassConnection, 31):
		return "connection.tune-ok"
	case methodKey(ClassConnection, 40):
		return "connection.open"
	case methodKey(ClassConnection, 41):
		return "connection.open-ok"
	case methodKey(ClassConnection, 50):
		return "connection.close"
	case methodKey(ClassConnection, 51):
		return "connection.close-ok"
	case methodKey(ClassConnection, 60):
		return "connection.blocked"
	case methodKey(ClassConnection, 61):
		return "connection.unblocked"
	case methodKey(ClassConnection, 70):
		return "connection.update-secret"
	case methodKey(ClassConnection, 71):
		return "connection.update-secret-ok"
	case methodKey(ClassChannel, 10):
		return "channel.open"
	case methodKey(ClassChannel, 11):
		return "channel.open-ok"
	case methodKey(ClassChannel, 20):
		return "channel.flow"
	case methodKey(ClassChannel, 21):
		return "channel.flow-ok"
	case methodKey(ClassChannel, 40):
		return "channel.close"
	case methodKey(ClassChannel, 41):
		return "channel.close-ok"
	case methodKey(ClassAccess, 10):
		return "access.request"
	case methodKey(ClassAccess, 11):
		return "access.request-ok"
	case methodKey(ClassTx, 10):
		return "tx.select"
	case methodKey(ClassTx, 11):
		return "tx.select-ok"
	case methodKey(ClassTx, 20):
		return "tx.commit"
	case methodKey(ClassTx, 21):
		return "tx.commit-ok"
	case methodKey(ClassTx, 30):
		return "tx.rollback"
	case methodKey(ClassTx, 31):
		return "tx.rollback-ok"
	case methodKey(ClassConfirm, 10):
		return "confirm.select"
	case methodKey(ClassConfirm, 11):
		return "confirm.select-ok"
	case methodKey(ClassExchange, 10):
		return "exchange.declare"
	case methodKey(ClassExchange, 11):
		return "exchange.declare-ok"
	case methodKey(ClassExchange, 20):
		return "exchange.delete"
	case methodKey(ClassExchange, 21):
		return "exchange.delete-ok"
	case methodKey(ClassExchange, 30):
		return "exchange.bind"
	case methodKey(ClassExchange, 31):
		return "exchange.bind-ok"
	case methodKey(ClassExchange, 40):
		return "exchange.unbind"
	case methodKey(ClassExchange, 51):
		return "exchange.unbind-ok"
	case methodKey(ClassQueue, 10):
		return "queue.declare"
	case methodKey(ClassQueue, 11):
		return "queue.declare-ok"
	case methodKey(ClassQueue, 20):
		return "queue.bind"
	case methodKey(ClassQueue, 21):
		return "queue.bind-ok"
	case methodKey(ClassQueue, 50):
		return "queue.unbind"
	case methodKey(ClassQueue, 51):
		return "queue.unbind-ok"
	case methodKey(ClassQueue, 30):
		return "queue.purge"
	case methodKey(ClassQueue, 31):
		return "queue.purge-ok"
	case methodKey(ClassQueue, 40):
		return "queue.delete"
	case methodKey(ClassQueue, 41):
		return "queue.delete-ok"
	case methodKey(ClassBasic, 10):
		return "basic.qos"
	case methodKey(ClassBasic, 11):
		return "basic.qos-ok"
	case methodKey(ClassBasic, 20):
		return "basic.consume"
	case methodKey(ClassBasic, 21):
		return "basic.consume-ok"
	case methodKey(ClassBasic, 30):
		return "basic.cancel"
	case methodKey(ClassBasic, 31):
		return "basic.cancel-ok"
	case methodKey(ClassBasic, 40):
		return "basic.publish"
	case methodKey(ClassBasic, 50):
		return "basic.return"
	case methodKey(ClassBasic, 60):
		return "basic.deliver"
	case methodKey(ClassBasic, 70):
		return "basic.get"
	case methodKey(ClassBasic, 71):
		return "basic.get-ok"
	case methodKey(ClassBasic, 72):
		return "basic.get-empty"
	case methodKey(ClassBasic, 80):
		return "basic.ack"
	case methodKey(ClassBasic, 90):
		return "basic.reject"
	case methodKey(ClassBasic, 100):
		return "basic.recover-async"
	case methodKey(ClassBasic, 110):
		return "basic.recover"
	case methodKey(ClassBasic, 111):
		return "basic.recover-ok"
	case methodKey(ClassBasic, 120):
		return "basic.nack"
	}
	return "class " + strconv.Itoa(int(class)) + ", method " + strconv.Itoa(int(method))
}
