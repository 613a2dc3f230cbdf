// Placeholder: replaced by the webhook module (parseWebhook, createWebhookHandler).
export {};
