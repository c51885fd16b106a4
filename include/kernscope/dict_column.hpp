// A column of few distinct values, dictionary-encoded: each row holds a 2-byte code into the
// column's distinct values. Thread and process ids, graph node ids: a 300 MB export's 4.1 M API
// calls come from a dozen threads, so their 8-byte thread ids were 33 MB of the trace where the
// codes take 8. Reads give the value (operator[] returns T, not a reference); a column that meets
// more than 65,536 distinct values stores them plainly from then on, so no input is refused.
// The interface is the part of std::vector the model's generic code uses (columns.hpp, the readers'
// column lists), so a column can change between the two without touching its readers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <unordered_map>
#include <vector>

namespace kernscope {

template <class T>
class DictColumn {
 public:
  using value_type = T;
  using size_type = std::size_t;

  // Values by position: a random-access iterator that yields copies.
  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = T;
    const_iterator() = default;
    const_iterator(const DictColumn* column, std::size_t i) : column_(column), i_(i) {}
    T operator*() const { return (*column_)[i_]; }
    T operator[](difference_type n) const { return (*column_)[i_ + n]; }
    const_iterator& operator++() { ++i_; return *this; }
    const_iterator operator++(int) { auto old = *this; ++i_; return old; }
    const_iterator& operator--() { --i_; return *this; }
    const_iterator operator--(int) { auto old = *this; --i_; return old; }
    const_iterator& operator+=(difference_type n) { i_ += n; return *this; }
    const_iterator& operator-=(difference_type n) { i_ -= n; return *this; }
    friend const_iterator operator+(const_iterator a, difference_type n) { return a += n; }
    friend const_iterator operator+(difference_type n, const_iterator a) { return a += n; }
    friend const_iterator operator-(const_iterator a, difference_type n) { return a -= n; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.i_ == b.i_; }
    friend auto operator<=>(const const_iterator& a, const const_iterator& b) { return a.i_ <=> b.i_; }

   private:
    const DictColumn* column_ = nullptr;
    std::size_t i_ = 0;
  };
  using iterator = const_iterator;

  DictColumn() = default;
  DictColumn(std::size_t n, T value) { resize(n, value); }
  DictColumn(std::initializer_list<T> values) { for (T v : values) push_back(v); }

  std::size_t size() const { return plain_mode_ ? plain_.size() : codes_.size(); }
  bool empty() const { return size() == 0; }
  T operator[](std::size_t i) const { return plain_mode_ ? plain_[i] : values_[codes_[i]]; }
  T front() const { return (*this)[0]; }
  T back() const { return (*this)[size() - 1]; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }
  // The distinct values met (every row's value is one of them; some may no longer be used).
  // Plain mode (more than kMaxCodes values): empty.
  const std::vector<T>& distinct_values() const { return values_; }

  void reserve(std::size_t n) { plain_mode_ ? plain_.reserve(n) : codes_.reserve(n); }
  std::size_t capacity() const { return plain_mode_ ? plain_.capacity() : codes_.capacity(); }
  // Bytes held by the rows (codes or plain values) and the dictionary.
  std::size_t bytes() const {
    return codes_.capacity() * sizeof(Code) + plain_.capacity() * sizeof(T) + values_.capacity() * sizeof(T);
  }
  void push_back(T value) {
    if (!plain_mode_) {
      if (const std::size_t code = code_of(value); code != kNoCode) {
        codes_.push_back(static_cast<Code>(code));
        return;
      }
      to_plain();
    }
    plain_.push_back(value);
  }
  void emplace_back(T value = T{}) { push_back(value); }
  void resize(std::size_t n, T value = T{}) {
    if (n <= size()) {
      plain_mode_ ? plain_.resize(n) : codes_.resize(n);
      return;
    }
    if (!plain_mode_) {
      if (const std::size_t code = code_of(value); code != kNoCode) {
        codes_.resize(n, static_cast<Code>(code));
        return;
      }
      to_plain();
    }
    plain_.resize(n, value);
  }
  void assign(std::size_t n, T value) {
    clear();
    resize(n, value);
  }
  // Sets row i's value (a read returns a copy, so writes go through here).
  void set(std::size_t i, T value) {
    if (!plain_mode_) {
      if (const std::size_t code = code_of(value); code != kNoCode) {
        codes_[i] = static_cast<Code>(code);
        return;
      }
      to_plain();
    }
    plain_[i] = value;
  }
  // Appends [first, last) at the end (the only position the model's generic code inserts at).
  template <class It>
  void insert(const_iterator at, It first, It last) {
    (void)at;
    for (; first != last; ++first) push_back(static_cast<T>(*first));
  }
  void clear() { *this = DictColumn(); }
  void shrink_to_fit() {
    codes_.shrink_to_fit();
    plain_.shrink_to_fit();
  }
  void swap(DictColumn& other) noexcept {
    codes_.swap(other.codes_);
    plain_.swap(other.plain_);
    values_.swap(other.values_);
    index_.swap(other.index_);
    std::swap(last_code_, other.last_code_);
    std::swap(plain_mode_, other.plain_mode_);
  }
  friend bool operator==(const DictColumn& a, const DictColumn& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  // The rows as a plain vector (for callers that need contiguous values: Python's arrays).
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

  static constexpr std::size_t kMaxCodes = std::size_t{1} << 16;

 private:
  using Code = std::uint16_t;
  static constexpr std::size_t kNoCode = SIZE_MAX;
  // Below this many values a linear scan finds a code faster than hashing.
  static constexpr std::size_t kScanValues = 16;

  // The value's code, adding it to the dictionary when new; kNoCode when the dictionary is full.
  std::size_t code_of(T value) {
    if (last_code_ < values_.size() && values_[last_code_] == value) return last_code_;
    if (values_.size() <= kScanValues) {
      for (std::size_t c = 0; c < values_.size(); ++c) {
        if (values_[c] == value) return last_code_ = c;
      }
    } else if (auto it = index_.find(value); it != index_.end()) {
      return last_code_ = it->second;
    }
    if (values_.size() == kMaxCodes) return kNoCode;
    values_.push_back(value);
    if (values_.size() > kScanValues) {
      if (index_.empty()) {
        for (std::size_t c = 0; c < values_.size(); ++c) index_.emplace(values_[c], c);
      } else {
        index_.emplace(value, values_.size() - 1);
      }
    }
    return last_code_ = values_.size() - 1;
  }
  void to_plain() {
    plain_.reserve(std::max(codes_.capacity(), codes_.size() + 1));
    for (Code c : codes_) plain_.push_back(values_[c]);
    std::vector<Code>().swap(codes_);
    std::vector<T>().swap(values_);
    std::unordered_map<T, std::size_t>().swap(index_);
    plain_mode_ = true;
  }

  std::vector<Code> codes_;
  std::vector<T> values_;                        // code -> value
  std::unordered_map<T, std::size_t> index_;     // value -> code, once the values outgrow a scan
  std::vector<T> plain_;                         // the rows, once there are too many values to code
  std::size_t last_code_ = 0;
  bool plain_mode_ = false;
};

}  // namespace kernscope
