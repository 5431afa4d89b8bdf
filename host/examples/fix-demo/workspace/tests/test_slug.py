import unittest

from app.slug import slugify


class SlugifyTest(unittest.TestCase):
    def test_plain_words(self):
        self.assertEqual(slugify("release notes"), "release-notes")

    def test_punctuation_and_case(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")


if __name__ == "__main__":
    unittest.main()
