"""results layer: the endpoint runners report to, and the credentials it checks.

- `endpoint.add_routes(app, store, key)` serves `POST /v1/results/{namespace}/{operationID}`;
- `store.KubernetesResultStore(api_client)` records results as ConfigMaps;
- `store.load_result_key(api_client, namespace, key_file=None)` gives the manager's key;
- `credentials.operation_token` and `credentials.operation_secret` make an operation's Secret.
"""
