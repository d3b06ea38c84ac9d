"""results layer: the endpoint runners report to, and the credentials it checks.

- `endpoint.add_routes(app, store, key)` serves `POST /v1/results/{namespace}/{operationID}`
  (a report), and for a PtahSchema `PUT …/{operationID}/plan/{index}` (a piece of a Plan's plan
  file) and `GET …/{operationID}/plan` (the published plan of an Apply), see `plan_text`;
- `store.KubernetesResultStore(api_client)` records results and pieces as ConfigMaps;
- `store.load_result_key(api_client, namespace, key_file=None)` gives the manager's key;
- `credentials.operation_token` and `credentials.operation_secret` make an operation's Secret.
"""
