"""The weather API client."""

from .retry import with_retries


class WeatherClient:
    def __init__(self, transport, base_url="https://api.example.com"):
        self.transport = transport
        self.base_url = base_url

    def forecast(self, city: str):
        request = {"method": "GET", "url": f"{self.base_url}/forecast?city={city}"}
        return with_retries(self.transport.send, request)
