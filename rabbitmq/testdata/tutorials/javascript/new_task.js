#!/usr/bin/env node
// RabbitMQ tutorial 2, "Work Queues" (JavaScript, amqplib): new_task.js as the tutorial gives it
// (rabbitmq-tutorials javascript-nodejs/src/new_task.js at commit 8aec600, Apache License 2.0; see README.md).
// Only this comment is added; the test replaces the broker's address.

const amqp = require('amqplib');

async function main() {
    const connection = await amqp.connect('amqp://localhost');
    const channel = await connection.createChannel();

    const queue = 'task_queue';
    const msg = process.argv.slice(2).join(' ') || "Hello World!";

    await channel.assertQueue(queue, {
        durable: true,
        arguments: { 'x-queue-type': 'quorum' }
    });
    channel.sendToQueue(queue, Buffer.from(msg), {
        persistent: true
    });
    console.log(" [x] Sent '%s'", msg);

    setTimeout(function() {
        connection.close();
        process.exit(0);
    }, 500);
}

main();
